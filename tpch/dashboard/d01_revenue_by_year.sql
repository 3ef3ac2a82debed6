-- Revenue and orders per year.
SELECT o_year, sum(revenue) AS revenue, count(DISTINCT o_orderkey) AS orders
FROM sales
GROUP BY o_year
ORDER BY o_year
