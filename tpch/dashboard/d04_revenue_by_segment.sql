-- Revenue and average order line per market segment.
SELECT c_mktsegment, sum(revenue) AS revenue, avg(revenue) AS avg_line, count(*) AS line_items
FROM sales
GROUP BY c_mktsegment
ORDER BY revenue DESC
