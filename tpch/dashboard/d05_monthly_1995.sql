-- Monthly revenue in 1995.
SELECT o_month, sum(revenue) AS revenue
FROM sales
WHERE o_year = 1995
GROUP BY o_month
ORDER BY o_month
