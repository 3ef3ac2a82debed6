-- Discounts and quantities per ship mode.
SELECT l_shipmode, avg(l_discount) AS avg_discount, sum(l_quantity) AS quantity, sum(revenue) AS revenue
FROM sales
GROUP BY l_shipmode
ORDER BY l_shipmode
