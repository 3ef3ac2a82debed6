-- Window functions: one Window node between HAVING and the select list
SELECT n_name, row_number() OVER (PARTITION BY n_regionkey ORDER BY n_name DESC) AS rn, lag(n_name, 2, 'none') OVER (ORDER BY n_nationkey) FROM nation;
SELECT n_regionkey, sum(n_nationkey), rank() OVER (ORDER BY sum(n_nationkey) DESC), sum(sum(n_nationkey)) OVER () FROM nation GROUP BY n_regionkey HAVING count(*) > 1;
SELECT n_name, count(*) OVER w, avg(n_nationkey) OVER (w ORDER BY n_name ROWS BETWEEN 2 PRECEDING AND 1 FOLLOWING) FROM nation WINDOW w AS (PARTITION BY n_regionkey);
SELECT n_name FROM nation ORDER BY rank() OVER (ORDER BY n_regionkey), n_name;
SELECT sum(n_nationkey) OVER (ORDER BY n_regionkey RANGE BETWEEN 1 PRECEDING AND CURRENT ROW), count(*) OVER (ORDER BY n_name GROUPS BETWEEN CURRENT ROW AND 2 FOLLOWING), ntile(4) OVER (ORDER BY n_name) FROM nation;
SELECT n_name FROM nation WHERE rank() OVER (ORDER BY n_name) = 1;
SELECT sum(n_nationkey) OVER (ORDER BY n_name, n_regionkey RANGE BETWEEN 1 PRECEDING AND CURRENT ROW) FROM nation;
SELECT n_name, rank() OVER w AS r FROM nation WHERE n_nationkey > 2 QUALIFY r <= 2 AND count(*) OVER () > 3 WINDOW w AS (PARTITION BY n_regionkey ORDER BY n_name);
SELECT n_name FROM nation QUALIFY;
SELECT count(*) OVER (ORDER BY o_orderdate RANGE BETWEEN INTERVAL '1 month' PRECEDING AND INTERVAL '3' DAY FOLLOWING), avg(o_totalprice) OVER (ORDER BY o_totalprice DESC RANGE BETWEEN 1.5 PRECEDING AND 0.25 FOLLOWING) FROM orders;
SELECT sum(n_nationkey) OVER (ORDER BY n_name RANGE BETWEEN 1.5 PRECEDING AND CURRENT ROW) FROM nation;
SELECT n_name, array_agg(n_nationkey ORDER BY n_name DESC) OVER (PARTITION BY n_regionkey ORDER BY n_nationkey ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING), string_agg(n_name, ',') OVER (PARTITION BY n_regionkey) FROM nation;
SELECT array_agg(DISTINCT n_name) OVER () FROM nation;
