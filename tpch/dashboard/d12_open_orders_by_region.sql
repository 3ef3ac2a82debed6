-- Open (not yet shipped) revenue per region in the last year of the view.
SELECT region, count(DISTINCT o_orderkey) AS open_orders, sum(revenue) AS open_revenue
FROM sales
WHERE l_linestatus = 'O' AND o_year = 1996
GROUP BY region
ORDER BY open_revenue DESC, region
