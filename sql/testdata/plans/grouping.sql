-- Grouping sets: one Expand under one Aggregate grouped by the keys and the set's ordinal; DISTINCT ON: a ROW_NUMBER() filter
SELECT n_regionkey, n_name, count(*), sum(n_nationkey + 1), grouping(n_regionkey, n_name) FROM nation GROUP BY ROLLUP(n_regionkey, n_name);
SELECT n_regionkey, count(1), max(coalesce(n_comment, 'x')) FROM nation GROUP BY CUBE(n_regionkey, n_name) HAVING grouping(n_name) = 1;
SELECT n_name, n_regionkey, sum(n_nationkey) FROM nation GROUP BY n_name, GROUPING SETS ((n_regionkey), (n_regionkey), ()) ORDER BY grouping(n_regionkey), 1;
SELECT n_regionkey % 2 AS parity, count(DISTINCT n_name) FILTER (WHERE n_nationkey > 3) FROM nation GROUP BY ROLLUP(1);
SELECT count(*) FROM nation GROUP BY ();
SELECT DISTINCT ON (n_regionkey) n_regionkey, n_name FROM nation ORDER BY n_regionkey, n_nationkey DESC;
SELECT DISTINCT ON (n_regionkey % 3, n_name) n_name FROM nation ORDER BY n_name, n_regionkey % 3, n_comment;
SELECT DISTINCT ON (n_regionkey) n_name FROM nation ORDER BY n_name;
SELECT grouping(n_name) FROM nation;
SELECT n_name FROM nation GROUP BY CUBE();
