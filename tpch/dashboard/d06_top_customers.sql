-- The ten customers with the most revenue.
SELECT c_custkey, c_name, nation, sum(revenue) AS revenue
FROM sales
GROUP BY c_custkey, c_name, nation
ORDER BY revenue DESC, c_custkey
LIMIT 10
