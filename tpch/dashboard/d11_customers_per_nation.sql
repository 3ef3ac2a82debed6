-- Active customers per nation and year.
SELECT nation, o_year, count(DISTINCT c_custkey) AS customers
FROM sales
GROUP BY nation, o_year
ORDER BY nation, o_year
