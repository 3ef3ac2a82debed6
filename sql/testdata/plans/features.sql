-- Joins
SELECT c_name, o_orderkey FROM customer c LEFT JOIN orders o ON c.c_custkey = o.o_custkey AND o.o_totalprice > 100;
SELECT * FROM nation n FULL OUTER JOIN region r ON n.n_regionkey = r.r_regionkey;
SELECT n_name FROM nation JOIN region ON n_regionkey = r_regionkey WHERE r_name = 'ASIA';
SELECT * FROM nation RIGHT JOIN region ON r_regionkey = n_regionkey;
SELECT count(*) FROM nation CROSS JOIN region;
SELECT * FROM (SELECT n_nationkey AS k, n_name FROM nation) a JOIN (SELECT n_nationkey AS k FROM nation) b USING (k);
-- Ordering and limits
SELECT n_name FROM nation ORDER BY n_regionkey DESC NULLS LAST, n_name NULLS FIRST LIMIT 5 OFFSET 2;
SELECT n_name AS name FROM nation ORDER BY 1 LIMIT 3, 4;
SELECT n_name, n_regionkey + 1 AS r FROM nation ORDER BY r, n_comment;
SELECT DISTINCT n_regionkey FROM nation ORDER BY n_regionkey;
-- Aggregates
SELECT n_regionkey, count(*), count(DISTINCT n_name), min(n_name) FROM nation GROUP BY 1 HAVING count(*) > 2 ORDER BY count(*) DESC;
SELECT EXTRACT(YEAR FROM o_orderdate) AS y, sum(o_totalprice) FROM orders GROUP BY y;
SELECT sum(o_totalprice) / count(*) AS average, avg(o_totalprice) FROM orders;
-- Expressions
SELECT 1, 0.06, 1e3, 'x', TRUE, FALSE, NULL, DATE '2024-02-29', -5, 2 * (3 + 4) % 5;
SELECT CAST(n_nationkey AS BIGINT), CAST(n_nationkey AS INT), CAST('1.5' AS DECIMAL(10, 2)), CAST(n_name AS VARCHAR(10)), CAST(1 AS DOUBLE), CAST('2024-01-01' AS DATE), CAST(1 AS BOOLEAN) FROM nation;
SELECT n_name || '-' || n_comment, upper(n_name), lower(n_name), length(n_name), trim(n_name), concat(n_name, 1), coalesce(n_comment, 'none'), nullif(n_regionkey, 1), abs(n_regionkey), round(1.25, 1), substr(n_name, 2), SUBSTRING(n_name FROM 1 FOR 3) FROM nation;
SELECT CASE n_regionkey WHEN 1 THEN 'one' WHEN 2 THEN 'two' ELSE 'many' END, CASE WHEN n_regionkey > 2 THEN 1.5 ELSE 1 END FROM nation;
SELECT n_name FROM nation WHERE n_name LIKE 'A%' AND n_name NOT LIKE '%Z' AND n_comment IS NOT NULL AND n_regionkey NOT BETWEEN 1 AND 2 AND n_nationkey NOT IN (1, 2, 3);
SELECT o_orderdate + INTERVAL '3' DAY, o_orderdate - INTERVAL 1 YEAR, o_orderdate - DATE '1995-01-01', o_orderdate + 1 FROM orders WHERE o_orderdate > '1995-01-01';
SELECT n_name FROM nation WHERE (n_regionkey = 1) IS TRUE OR n_name = 'x' || 'y';
-- Subqueries
SELECT n_name FROM nation n WHERE EXISTS (SELECT 1 FROM region r WHERE r.r_regionkey = n.n_regionkey) AND n_regionkey IN (SELECT r_regionkey FROM region);
SELECT n_name, (SELECT max(r_name) FROM region WHERE r_regionkey = n_regionkey) FROM nation;
SELECT n_name FROM nation WHERE n_nationkey = ANY (SELECT s_nationkey FROM supplier);
-- Set operations, VALUES, CTEs, views
SELECT n_nationkey FROM nation UNION ALL SELECT r_regionkey FROM region UNION ALL SELECT 1.5;
SELECT n_name FROM nation UNION SELECT r_name FROM region ORDER BY 1 LIMIT 3;
VALUES (1, 'a'), (2, NULL), (3.5, 'c');
SELECT * FROM (VALUES (1, 2)) AS t (a, b);
SELECT 1 + 1 AS two;
WITH r AS (SELECT r_regionkey AS k FROM region), n (nkey, nname) AS (SELECT n_nationkey, n_name FROM nation) SELECT nname FROM n, r WHERE n.nkey = r.k;
SELECT * FROM urgent_orders WHERE o_totalprice > 1000;
-- Other statements
CREATE EXTERNAL TABLE t1 (a INT NOT NULL, b VARCHAR, c DECIMAL(10,2), d DATE) STORED AS CSV LOCATION '/tmp/t1.csv' OPTIONS ('delimiter' '|', 'HAS_HEADER' 'true');
CREATE OR REPLACE EXTERNAL TABLE IF NOT EXISTS "T2" STORED AS PARQUET OPTIONS ('x' = 'y') LOCATION 'data/';
CREATE VIEW v1 AS SELECT n_name FROM nation;
DROP TABLE IF EXISTS t1;
DROP VIEW v1;
SHOW TABLES;
DESCRIBE nation;
DESC orders;
EXPLAIN SELECT 1;
EXPLAIN ANALYZE VERBOSE SELECT n_name FROM nation;
SET quiver.memory_limit = '2GB';
SET datafusion.execution.batch_size TO 8192;
SHOW quiver.memory_limit;
CACHE TABLE hot AS SELECT * FROM lineitem WHERE l_quantity > 10;
CACHE LAZY TABLE hot2 OPTIONS ('storage' 'memory') SELECT 1;
CACHE TABLE nation;
UNCACHE TABLE IF EXISTS hot;
CLEAR CACHE;
SHOW CACHES;
