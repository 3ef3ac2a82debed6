-- WITH RECURSIVE: the recursive term reads the WorkTable bound to the CTE's name
WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 10) SELECT n FROM t;
WITH RECURSIVE r(k) AS (SELECT r_regionkey FROM region UNION SELECT n_nationkey FROM nation JOIN r ON n_regionkey = r.k % 5) SELECT count(*) FROM r;
WITH RECURSIVE t(a, b) AS (SELECT 1, 1.5 UNION ALL SELECT a + 1, b * 2 FROM t WHERE a < 3), u AS (SELECT a FROM t) SELECT * FROM u;
WITH RECURSIVE t(n) AS (SELECT 7) SELECT n FROM t;
-- INTERSECT ALL and EXCEPT ALL: a window over every column numbers each side's copies
SELECT n_regionkey FROM nation INTERSECT ALL SELECT r_regionkey FROM region;
SELECT n_regionkey, n_name FROM nation EXCEPT ALL SELECT r_regionkey, r_name FROM region ORDER BY 1;
SELECT 1 UNION ALL SELECT n_regionkey FROM nation INTERSECT ALL SELECT 2;
-- Window IGNORE NULLS and DISTINCT
SELECT lag(n_comment) IGNORE NULLS OVER (ORDER BY n_nationkey), count(DISTINCT n_regionkey) OVER (), sum(DISTINCT n_regionkey) OVER (PARTITION BY n_name) FROM nation;
