-- Share of revenue returned, per region.
SELECT region,
       sum(CASE WHEN l_returnflag = 'R' THEN revenue ELSE 0 END) AS returned,
       sum(revenue) AS revenue,
       sum(CASE WHEN l_returnflag = 'R' THEN revenue ELSE 0 END) / sum(revenue) AS returned_share
FROM sales
GROUP BY region
ORDER BY returned_share DESC, region
