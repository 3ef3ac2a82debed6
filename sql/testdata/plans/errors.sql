SELECT * FROM missing;
SELECT nope FROM nation;
SELECT n_name FROM nation, region WHERE n_name = r_name AND
  bogus(n_name) = 1;
SELECT n_name FROM nation WHERE count(*) > 1;
SELECT n_name, count(*) FROM nation;
SELECT n_name FROM nation GROUP BY n_regionkey;
SELECT 1, 2 UNION SELECT 1;
SELECT CAST(1 AS WIBBLE);
SELECT n_name + 1 FROM nation;
SELECT sum(n_name) FROM nation;
SELECT * FROM loop_a;
SELECT DATE '2023-02-30';
SELECT n_name FROM nation WHERE n_regionkey;
SELECT n_nationkey FROM nation n, nation m;
SELECT 1 FROM nation
WHERE n_name = = 'x';
MERGE INTO nation USING region ON 1 = 1 WHEN MATCHED THEN DELETE;
CREATE EXTERNAL TABLE t STORED AS XML LOCATION 'x';
CREATE EXTERNAL TABLE t (a WIBBLE) STORED AS CSV LOCATION 'x';
CREATE EXTERNAL TABLE t STORED AS CSV;
SELECT n_name FROM nation ORDER BY 5;
SELECT DISTINCT n_name FROM nation ORDER BY n_comment;
