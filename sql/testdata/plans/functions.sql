-- The function library and the newer syntax, as the logical plans they make.
SELECT upper(n_name), lpad(n_name, 10, '*'), strpos(n_comment, 'the'), ifnull(n_comment, '') FROM nation;
SELECT regexp_replace(n_name, '[AEIOU]', '_', 'g'), split_part(n_comment, ' ', 2), POSITION('A' IN n_name) FROM nation;
SELECT ceil(o_totalprice), floor(o_totalprice), sqrt(o_totalprice), greatest(o_totalprice, 1000) FROM orders;
SELECT date_trunc('month', o_orderdate), EXTRACT(dow FROM o_orderdate), year(o_orderdate), make_date(1998, 1, 1) FROM orders;
SELECT mod(n_nationkey, 3), TRY_CAST(n_comment AS INT) FROM nation;
SELECT n_regionkey, count(*) FILTER (WHERE n_nationkey > 5), bool_and(n_nationkey > 0), bit_or(n_nationkey), string_agg(n_name, ',') FROM nation GROUP BY n_regionkey;
SELECT corr(o_totalprice, o_shippriority), percentile_cont(0.5) WITHIN GROUP (ORDER BY o_totalprice DESC), median(o_totalprice), approx_distinct(o_custkey) FROM orders;
SELECT * EXCLUDE (n_comment) FROM nation AS n(k, nm, r);
SELECT key, rank FROM (SELECT n_nationkey AS key, n_regionkey AS rank FROM nation) t WHERE key > 1 AND rank <> 0 AND E'\x31' = '1';
SELECT * FROM information_schema.columns WHERE table_name = 'region';
SELECT nosuch(n_name) FROM nation;
SELECT lpad(n_name) FROM nation;
SELECT bool_and(n_name) FROM nation;
