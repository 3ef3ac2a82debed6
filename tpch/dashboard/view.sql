-- The dashboard's base view: every line item of the orders placed from 1994
-- to 1996 with its customer, nation and region, and the revenue expression.
-- The cached workload caches this view (CACHE TABLE sales) and runs the
-- dashboard queries over it.
CREATE VIEW sales AS
SELECT
    o_orderkey,
    o_orderdate,
    EXTRACT(YEAR FROM o_orderdate) AS o_year,
    EXTRACT(MONTH FROM o_orderdate) AS o_month,
    o_orderpriority,
    o_orderstatus,
    c_custkey,
    c_name,
    c_mktsegment,
    n_name AS nation,
    r_name AS region,
    l_returnflag,
    l_linestatus,
    l_shipmode,
    l_quantity,
    l_extendedprice,
    l_discount,
    l_extendedprice * (1 - l_discount) AS revenue
FROM lineitem
JOIN orders ON l_orderkey = o_orderkey
JOIN customer ON o_custkey = c_custkey
JOIN nation ON c_nationkey = n_nationkey
JOIN region ON n_regionkey = r_regionkey
WHERE o_orderdate >= DATE '1994-01-01' AND o_orderdate < DATE '1997-01-01'
