-- Revenue per region and year.
SELECT region, o_year, sum(revenue) AS revenue
FROM sales
GROUP BY region, o_year
ORDER BY region, o_year
