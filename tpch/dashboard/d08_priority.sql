-- Orders and revenue per order priority.
SELECT o_orderpriority, count(DISTINCT o_orderkey) AS orders, sum(revenue) AS revenue
FROM sales
GROUP BY o_orderpriority
ORDER BY o_orderpriority
