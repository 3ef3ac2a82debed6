-- Line items and revenue per quantity band.
SELECT CASE WHEN l_quantity <= 10 THEN '01-10'
            WHEN l_quantity <= 25 THEN '11-25'
            WHEN l_quantity <= 40 THEN '26-40'
            ELSE '41-50' END AS quantity_band,
       count(*) AS line_items,
       sum(revenue) AS revenue
FROM sales
GROUP BY quantity_band
ORDER BY quantity_band
