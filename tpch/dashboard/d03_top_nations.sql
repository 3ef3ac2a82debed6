-- The ten nations with the most revenue.
SELECT nation, sum(revenue) AS revenue
FROM sales
GROUP BY nation
ORDER BY revenue DESC, nation
LIMIT 10
