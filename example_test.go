package quiver_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver"
	"github.com/quiverdb/quiver/format"
)

// fruits is the small in-memory table the examples use.
const fruits = `[
 {"name": "apple",  "color": "red",    "price": "1.20", "qty": 10},
 {"name": "banana", "color": "yellow", "price": "0.50", "qty": 25},
 {"name": "cherry", "color": "red",    "price": "3.00", "qty": null},
 {"name": "lemon",  "color": "yellow", "price": "0.80", "qty": 7}
]`

var fruitSchema = arrow.NewSchema([]arrow.Field{
	{Name: "name", Type: arrow.BinaryTypes.String},
	{Name: "color", Type: arrow.BinaryTypes.String},
	{Name: "price", Type: &arrow.Decimal128Type{Precision: 5, Scale: 2}},
	{Name: "qty", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
}, nil)

// exampleSession returns a session with the table "fruits" registered.
func exampleSession(ctx context.Context) *quiver.Session {
	s, err := quiver.NewSession(ctx, quiver.WithTargetPartitions(2))
	if err != nil {
		panic(err)
	}
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, fruitSchema, strings.NewReader(fruits))
	if err != nil {
		panic(err)
	}
	defer rec.Release()
	if err := s.RegisterRecords("fruits", fruitSchema, []arrow.RecordBatch{rec}); err != nil {
		panic(err)
	}
	return s
}

func fruitsDF(ctx context.Context, s *quiver.Session) *quiver.DataFrame {
	df, err := s.Table(ctx, "fruits")
	if err != nil {
		panic(err)
	}
	return df
}

func ExampleNewSession() {
	ctx := context.Background()
	s, err := quiver.NewSession(ctx)
	if err != nil {
		panic(err)
	}
	defer s.Close()
	df, _ := s.SQL(ctx, "SELECT 1 + 1 AS two")
	df.Show(ctx, os.Stdout)
	// Output:
	// ┌─────┐
	// │ two │
	// ├─────┤
	// │   2 │
	// └─────┘
}

func ExampleSession_SQL() {
	ctx := context.Background()
	s := exampleSession(ctx)
	defer s.Close()
	df, err := s.SQL(ctx, "SELECT color, sum(qty) AS qty FROM fruits GROUP BY color ORDER BY color")
	if err != nil {
		panic(err)
	}
	df.Show(ctx, os.Stdout)
	// Output:
	// ┌────────┬─────┐
	// │ color  │ qty │
	// ├────────┼─────┤
	// │ red    │  10 │
	// │ yellow │  32 │
	// └────────┴─────┘
}

func ExampleSession_RegisterRecords() {
	ctx := context.Background()
	s, _ := quiver.NewSession(ctx)
	defer s.Close()
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)
	rec, _, _ := array.RecordFromJSON(memory.DefaultAllocator, schema, strings.NewReader(`[{"x": 1}, {"x": 2}]`))
	defer rec.Release()
	if err := s.RegisterRecords("t", schema, []arrow.RecordBatch{rec}); err != nil {
		panic(err)
	}
	df, _ := s.SQL(ctx, "SELECT sum(x) AS total FROM t")
	df.Show(ctx, os.Stdout)
	// Output:
	// ┌───────┐
	// │ total │
	// ├───────┤
	// │     3 │
	// └───────┘
}

func ExampleSession_RegisterParquet() {
	ctx := context.Background()
	s, _ := quiver.NewSession(ctx)
	defer s.Close()
	if err := s.RegisterParquet(ctx, "nation", "tpch/sf0.01/nation.parquet"); err != nil {
		panic(err)
	}
	df, _ := s.SQL(ctx, "SELECT n_name FROM nation WHERE n_nationkey < 3 ORDER BY n_nationkey")
	df.Show(ctx, os.Stdout)
	// Output:
	// ┌───────────┐
	// │ n_name    │
	// ├───────────┤
	// │ ALGERIA   │
	// │ ARGENTINA │
	// │ BRAZIL    │
	// └───────────┘
}

func ExampleSession_RegisterCSV() {
	ctx := context.Background()
	s, _ := quiver.NewSession(ctx)
	defer s.Close()
	if err := s.RegisterCSV(ctx, "orders", "testdata/slt/data/orders.csv", quiver.CSVDelimiter('|')); err != nil {
		panic(err)
	}
	n, _ := fruitsCount(ctx, s, "orders")
	fmt.Println(n)
	// Output: 6
}

func fruitsCount(ctx context.Context, s *quiver.Session, table string) (int64, error) {
	df, err := s.Table(ctx, table)
	if err != nil {
		return 0, err
	}
	return df.Count(ctx)
}

func ExampleSession_Table() {
	ctx := context.Background()
	s := exampleSession(ctx)
	defer s.Close()
	df, err := s.Table(ctx, "fruits")
	if err != nil {
		panic(err)
	}
	fmt.Println(df.Schema().NumFields(), "columns")
	_, err = s.Table(ctx, "vegetables")
	fmt.Println(err)
	// Output:
	// 4 columns
	// planning error: table "vegetables" not found
}

func ExampleDataFrame_Filter() {
	ctx := context.Background()
	s := exampleSession(ctx)
	defer s.Close()
	df := fruitsDF(ctx, s).
		Filter(quiver.Col("color").Eq("red").And(quiver.Col("price").Lt(quiver.Decimal("2.00")))).
		Select(quiver.Col("name"))
	df.Show(ctx, os.Stdout)
	// Output:
	// ┌───────┐
	// │ name  │
	// ├───────┤
	// │ apple │
	// └───────┘
}

func ExampleDataFrame_Select() {
	ctx := context.Background()
	s := exampleSession(ctx)
	defer s.Close()
	df := fruitsDF(ctx, s).
		Select(quiver.Col("name"), quiver.Col("price").Mul(quiver.Col("qty")).As("value")).
		Sort(quiver.Col("name").Asc())
	df.Show(ctx, os.Stdout)
	// Output:
	// ┌────────┬───────┐
	// │ name   │ value │
	// ├────────┼───────┤
	// │ apple  │ 12.00 │
	// │ banana │ 12.50 │
	// │ cherry │  NULL │
	// │ lemon  │  5.60 │
	// └────────┴───────┘
}

func ExampleDataFrame_Aggregate() {
	ctx := context.Background()
	s := exampleSession(ctx)
	defer s.Close()
	df := fruitsDF(ctx, s).
		Aggregate(
			[]quiver.Expr{quiver.Col("color")},
			[]quiver.Expr{quiver.Count(quiver.Col("*")).As("n"), quiver.Max(quiver.Col("price")).As("top")},
		).
		Sort(quiver.Col("color").Asc())
	df.Show(ctx, os.Stdout)
	// Output:
	// ┌────────┬───┬──────┐
	// │ color  │ n │ top  │
	// ├────────┼───┼──────┤
	// │ red    │ 2 │ 3.00 │
	// │ yellow │ 2 │ 0.80 │
	// └────────┴───┴──────┘
}

func ExampleDataFrame_Join() {
	ctx := context.Background()
	s := exampleSession(ctx)
	defer s.Close()
	colors, _ := s.SQL(ctx, "SELECT 'red' AS hue, 'warm' AS mood UNION ALL SELECT 'blue', 'cool'")
	df := fruitsDF(ctx, s).
		Join(colors, quiver.InnerJoin, quiver.Col("color").Eq(quiver.Col("hue"))).
		Select(quiver.Col("name"), quiver.Col("mood")).
		Sort(quiver.Col("name").Asc())
	df.Show(ctx, os.Stdout)
	// Output:
	// ┌────────┬──────┐
	// │ name   │ mood │
	// ├────────┼──────┤
	// │ apple  │ warm │
	// │ cherry │ warm │
	// └────────┴──────┘
}

func ExampleDataFrame_Sort() {
	ctx := context.Background()
	s := exampleSession(ctx)
	defer s.Close()
	df := fruitsDF(ctx, s).Select(quiver.Col("name"), quiver.Col("qty")).Sort(quiver.Col("qty").Desc())
	df.Show(ctx, os.Stdout)
	// Output:
	// ┌────────┬──────┐
	// │ name   │ qty  │
	// ├────────┼──────┤
	// │ cherry │ NULL │
	// │ banana │   25 │
	// │ apple  │   10 │
	// │ lemon  │    7 │
	// └────────┴──────┘
}

func ExampleDataFrame_Limit() {
	ctx := context.Background()
	s := exampleSession(ctx)
	defer s.Close()
	df := fruitsDF(ctx, s).Sort(quiver.Col("name").Asc()).Limit(1, 2).Select(quiver.Col("name"))
	df.Show(ctx, os.Stdout)
	// Output:
	// ┌────────┐
	// │ name   │
	// ├────────┤
	// │ banana │
	// │ cherry │
	// └────────┘
}

func ExampleDataFrame_Cache() {
	ctx := context.Background()
	s := exampleSession(ctx)
	defer s.Close()
	red := fruitsDF(ctx, s).Filter(quiver.Col("color").Eq("red")).Cache()
	n, _ := red.Count(ctx)
	cheap, _ := red.Filter(quiver.Col("price").Lt(2)).Count(ctx)
	fmt.Println(n, cheap)
	// Output: 2 1
}

func ExampleDataFrame_Schema() {
	ctx := context.Background()
	s := exampleSession(ctx)
	defer s.Close()
	df := fruitsDF(ctx, s).Select(quiver.Col("name"), quiver.Col("price").Mul(2).As("double"))
	for _, f := range df.Schema().Fields() {
		fmt.Println(f.Name, f.Type)
	}
	// Output:
	// name utf8
	// double decimal(25, 2)
}

func ExampleDataFrame_Err() {
	ctx := context.Background()
	s := exampleSession(ctx)
	defer s.Close()
	df := fruitsDF(ctx, s).Filter(quiver.Col("weight").Gt(1)).Select(quiver.Col("name"))
	fmt.Println(df.Err())
	// Output: planning error: Filter: column "weight" not found; valid columns: fruits.name, fruits.color, fruits.price, fruits.qty
}

func ExampleDataFrame_Collect() {
	ctx := context.Background()
	s := exampleSession(ctx)
	defer s.Close()
	batches, err := fruitsDF(ctx, s).Select(quiver.Col("name")).Collect(ctx)
	if err != nil {
		panic(err)
	}
	var rows int64
	for _, b := range batches {
		rows += b.NumRows()
		b.Release() // the caller owns the batches
	}
	fmt.Println(rows)
	// Output: 4
}

func ExampleDataFrame_Stream() {
	ctx := context.Background()
	s := exampleSession(ctx)
	defer s.Close()
	var rows int64
	for b, err := range fruitsDF(ctx, s).Stream(ctx) {
		if err != nil {
			panic(err)
		}
		rows += b.NumRows() // b is released when the loop body returns
	}
	fmt.Println(rows)
	// Output: 4
}

func ExampleDataFrame_Count() {
	ctx := context.Background()
	s := exampleSession(ctx)
	defer s.Close()
	n, _ := fruitsDF(ctx, s).Filter(quiver.Col("qty").IsNull()).Count(ctx)
	fmt.Println(n)
	// Output: 1
}

func ExampleDataFrame_Show() {
	ctx := context.Background()
	s := exampleSession(ctx)
	defer s.Close()
	fruitsDF(ctx, s).Filter(quiver.Col("name").Like("%an%")).Show(ctx, os.Stdout)
	// Output:
	// ┌────────┬────────┬───────┬─────┐
	// │ name   │ color  │ price │ qty │
	// ├────────┼────────┼───────┼─────┤
	// │ banana │ yellow │  0.50 │  25 │
	// └────────┴────────┴───────┴─────┘
}

func ExampleDataFrame_Explain() {
	ctx := context.Background()
	s := exampleSession(ctx)
	defer s.Close()
	plan, _ := fruitsDF(ctx, s).Filter(quiver.Col("qty").Gt(8)).Select(quiver.Col("name")).Explain(ctx, false)
	fmt.Println(strings.Contains(plan, "logical_plan:"), strings.Contains(plan, "physical_plan:"))
	// Output: true true
}

func ExampleDataFrame_WriteParquet() {
	ctx := context.Background()
	s := exampleSession(ctx)
	defer s.Close()
	dir, _ := os.MkdirTemp("", "quiver-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "red.parquet")
	if err := fruitsDF(ctx, s).Filter(quiver.Col("color").Eq("red")).WriteParquet(ctx, path); err != nil {
		panic(err)
	}
	s.RegisterParquet(ctx, "red", path)
	n, _ := fruitsCount(ctx, s, "red")
	fmt.Println(n)
	// Output: 2
}

func ExampleDataFrame_WriteCSV() {
	ctx := context.Background()
	s := exampleSession(ctx)
	defer s.Close()
	dir, _ := os.MkdirTemp("", "quiver-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "fruits.csv")
	if err := fruitsDF(ctx, s).Select(quiver.Col("name"), quiver.Col("qty")).Sort(quiver.Col("name").Asc()).Limit(0, 3).WriteCSV(ctx, path); err != nil {
		panic(err)
	}
	b, _ := os.ReadFile(path)
	fmt.Print(string(b))
	// Output:
	// name,qty
	// apple,10
	// banana,25
	// cherry,
}

func ExampleExpr_In() {
	ctx := context.Background()
	s := exampleSession(ctx)
	defer s.Close()
	n, _ := fruitsDF(ctx, s).Filter(quiver.Col("name").In("apple", "lemon", "kiwi")).Count(ctx)
	fmt.Println(n)
	// Output: 2
}

func ExampleExpr_Between() {
	ctx := context.Background()
	s := exampleSession(ctx)
	defer s.Close()
	n, _ := fruitsDF(ctx, s).Filter(quiver.Col("qty").Between(7, 10)).Count(ctx)
	fmt.Println(n)
	// Output: 2
}

func ExampleExpr_Cast() {
	ctx := context.Background()
	s := exampleSession(ctx)
	defer s.Close()
	df := fruitsDF(ctx, s).Select(quiver.Col("price").Cast(arrow.PrimitiveTypes.Float64).As("p")).Sort(quiver.Col("p").Desc()).Limit(0, 1)
	df.Show(ctx, os.Stdout)
	// Output:
	// ┌─────┐
	// │ p   │
	// ├─────┤
	// │ 3.0 │
	// └─────┘
}

func ExampleSession_Close() {
	ctx := context.Background()
	s, _ := quiver.NewSession(ctx)
	fmt.Println(s.Close(), s.Close()) // idempotent
	_, err := s.SQL(ctx, "SELECT 1")
	fmt.Println(err)
	// Output:
	// <nil> <nil>
	// planning error: session is closed
}

func ExampleCol() {
	ctx := context.Background()
	s := exampleSession(ctx)
	defer s.Close()
	// A column by name, or qualified by its relation.
	df := fruitsDF(ctx, s).Select(quiver.Col("fruits.name")).Filter(quiver.Col("name").Neq("apple")).Sort(quiver.Col("name").Desc())
	df.Show(ctx, os.Stdout)
	// Output:
	// ┌────────┐
	// │ name   │
	// ├────────┤
	// │ lemon  │
	// │ cherry │
	// │ banana │
	// └────────┘
}

func ExampleLit() {
	ctx := context.Background()
	s := exampleSession(ctx)
	defer s.Close()
	df := fruitsDF(ctx, s).
		Filter(quiver.Col("qty").Gte(quiver.Lit(10)).Or(quiver.Col("qty").IsNull())).
		Select(quiver.Col("name"), quiver.Lit("fresh").As("label"), quiver.Lit(time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)).As("day")).
		Sort(quiver.Col("name").Asc())
	df.Show(ctx, os.Stdout)
	// Output:
	// ┌────────┬───────┬────────────┐
	// │ name   │ label │ day        │
	// ├────────┼───────┼────────────┤
	// │ apple  │ fresh │ 2024-05-01 │
	// │ banana │ fresh │ 2024-05-01 │
	// │ cherry │ fresh │ 2024-05-01 │
	// └────────┴───────┴────────────┘
}

func ExampleSum() {
	ctx := context.Background()
	s := exampleSession(ctx)
	defer s.Close()
	df := fruitsDF(ctx, s).Aggregate(nil, []quiver.Expr{
		quiver.Sum(quiver.Col("qty")).As("sum"),
		quiver.Avg(quiver.Col("qty")).As("avg"),
		quiver.Min(quiver.Col("price")).As("min"),
		quiver.Max(quiver.Col("price")).As("max"),
		quiver.Count(quiver.Col("qty")).As("count"),
		quiver.CountDistinct(quiver.Col("color")).As("colors"),
	})
	df.Show(ctx, os.Stdout)
	// Output:
	// ┌─────┬──────┬──────┬──────┬───────┬────────┐
	// │ sum │ avg  │ min  │ max  │ count │ colors │
	// ├─────┼──────┼──────┼──────┼───────┼────────┤
	// │  42 │ 14.0 │ 0.50 │ 3.00 │     3 │      2 │
	// └─────┴──────┴──────┴──────┴───────┴────────┘
}

func ExampleExpr_Like() {
	ctx := context.Background()
	s := exampleSession(ctx)
	defer s.Close()
	n, _ := fruitsDF(ctx, s).Filter(quiver.Col("name").Like("%e%").And(quiver.Col("name").Like("a%").Not())).Count(ctx)
	fmt.Println(n)
	// Output: 2
}

func ExampleExpr_Add() {
	ctx := context.Background()
	s := exampleSession(ctx)
	defer s.Close()
	df := fruitsDF(ctx, s).
		Select(quiver.Col("name"),
			quiver.Col("price").Add(quiver.Decimal("0.10")).As("plus"),
			quiver.Col("price").Sub(1).As("minus"),
			quiver.Col("price").Div(2).As("half")).
		Filter(quiver.Col("name").Eq("cherry"))
	df.Show(ctx, os.Stdout)
	// Output:
	// ┌────────┬──────┬───────┬──────┐
	// │ name   │ plus │ minus │ half │
	// ├────────┼──────┼───────┼──────┤
	// │ cherry │ 3.10 │  2.00 │  1.5 │
	// └────────┴──────┴───────┴──────┘
}

func ExampleSession_Caches() {
	ctx := context.Background()
	s := exampleSession(ctx)
	defer s.Close()
	if _, err := s.SQL(ctx, "CACHE TABLE red AS SELECT * FROM fruits WHERE color = 'red'"); err != nil {
		panic(err)
	}
	infos, _ := s.Caches(ctx)
	for _, c := range infos {
		fmt.Println(c.Name, c.State, c.Rows)
	}
	s.ClearCache(ctx)
	infos, _ = s.Caches(ctx)
	fmt.Println(len(infos))
	// Output:
	// red materialized 2
	// 0
}

func ExampleDataFrame_WithColumn() {
	ctx := context.Background()
	s := exampleSession(ctx)
	defer s.Close()
	df := fruitsDF(ctx, s).Select(quiver.Col("name"), quiver.Col("qty")).
		WithColumn("double", quiver.Col("qty").Mul(2)).
		WithColumn("qty", quiver.Col("qty").Add(1)) // replaces qty in place
	df.Sort(quiver.Col("name").Asc()).Head(2).Show(ctx, os.Stdout)
	// Output:
	// ┌────────┬─────┬────────┐
	// │ name   │ qty │ double │
	// ├────────┼─────┼────────┤
	// │ apple  │  11 │     20 │
	// │ banana │  26 │     50 │
	// └────────┴─────┴────────┘
}

func ExampleDataFrame_WithColumnRenamed() {
	ctx := context.Background()
	s := exampleSession(ctx)
	defer s.Close()
	df := fruitsDF(ctx, s).WithColumnRenamed("qty", "quantity")
	fmt.Println(df.Schema().Field(3).Name)
	// Output: quantity
}

func ExampleDataFrame_Drop() {
	ctx := context.Background()
	s := exampleSession(ctx)
	defer s.Close()
	df := fruitsDF(ctx, s).Drop("price", "qty")
	fmt.Println(df.Schema().NumFields(), df.Schema().Field(1).Name)
	fmt.Println(fruitsDF(ctx, s).Drop("weight").Err())
	// Output:
	// 2 color
	// planning error: Drop: column "weight" not found; valid columns: fruits.name, fruits.color, fruits.price, fruits.qty
}

func ExampleDataFrame_Distinct() {
	ctx := context.Background()
	s := exampleSession(ctx)
	defer s.Close()
	n, _ := fruitsDF(ctx, s).Select(quiver.Col("color")).Distinct().Count(ctx)
	fmt.Println(n)
	// Output: 2
}

func ExampleDataFrame_Union() {
	ctx := context.Background()
	s := exampleSession(ctx)
	defer s.Close()
	colors := fruitsDF(ctx, s).Select(quiver.Col("color"))
	all, _ := colors.Union(colors).Count(ctx)
	distinct, _ := colors.UnionDistinct(colors).Count(ctx)
	fmt.Println(all, distinct)
	// Output: 8 2
}

func ExampleDataFrame_UnionDistinct() {
	ctx := context.Background()
	s := exampleSession(ctx)
	defer s.Close()
	red := fruitsDF(ctx, s).Filter(quiver.Col("color").Eq("red")).Select(quiver.Col("color"))
	n, _ := red.UnionDistinct(red).Count(ctx)
	fmt.Println(n)
	// Output: 1
}

func ExampleDataFrame_Intersect() {
	ctx := context.Background()
	s := exampleSession(ctx)
	defer s.Close()
	names := fruitsDF(ctx, s).Select(quiver.Col("name"))
	cheap := fruitsDF(ctx, s).Filter(quiver.Col("price").Lt(quiver.Decimal("1.00"))).Select(quiver.Col("name"))
	names.Intersect(cheap).Sort(quiver.Col("name").Asc()).Print(ctx, os.Stdout, "csv", format.Options{})
	// Output:
	// name
	// banana
	// lemon
}

func ExampleDataFrame_Except() {
	ctx := context.Background()
	s := exampleSession(ctx)
	defer s.Close()
	names := fruitsDF(ctx, s).Select(quiver.Col("name"))
	cheap := fruitsDF(ctx, s).Filter(quiver.Col("price").Lt(quiver.Decimal("1.00"))).Select(quiver.Col("name"))
	names.Except(cheap).Sort(quiver.Col("name").Asc()).Print(ctx, os.Stdout, "csv", format.Options{})
	// Output:
	// name
	// apple
	// cherry
}

func ExampleDataFrame_JoinOn() {
	ctx := context.Background()
	s := exampleSession(ctx)
	defer s.Close()
	colors, _ := s.SQL(ctx, "SELECT column1 AS color, column2 AS mood FROM (VALUES ('red', 'warm'), ('yellow', 'bright')) AS c")
	fruitsDF(ctx, s).Select(quiver.Col("name"), quiver.Col("color")).
		JoinOn(colors.Alias("c"), quiver.InnerJoin, []string{"color"}, []string{"color"}).
		Select(quiver.Col("name"), quiver.Col("mood")).
		Sort(quiver.Col("name").Asc()).Print(ctx, os.Stdout, "csv", format.Options{})
	// Output:
	// name,mood
	// apple,warm
	// banana,bright
	// cherry,warm
	// lemon,bright
}

func ExampleDataFrame_Describe() {
	ctx := context.Background()
	s := exampleSession(ctx)
	defer s.Close()
	fruitsDF(ctx, s).Select(quiver.Col("name"), quiver.Col("qty")).Describe().Print(ctx, os.Stdout, "csv", format.Options{})
	// Output:
	// column_name,data_type,count,null_count,min,max,mean
	// name,Utf8,4,0,apple,lemon,
	// qty,Int64,3,1,7,25,14.0
}

func ExampleDataFrame_CreateView() {
	ctx := context.Background()
	s := exampleSession(ctx)
	defer s.Close()
	red := fruitsDF(ctx, s).Filter(quiver.Col("color").Eq("red"))
	if err := red.CreateView("red_fruits", false); err != nil {
		panic(err)
	}
	df, _ := s.SQL(ctx, "SELECT count(*) AS n FROM red_fruits")
	df.Print(ctx, os.Stdout, "csv", format.Options{})
	// Output:
	// n
	// 2
}

func ExampleSession_RegisterDataFrame() {
	ctx := context.Background()
	s := exampleSession(ctx)
	defer s.Close()
	s.RegisterDataFrame("yellow", fruitsDF(ctx, s).Filter(quiver.Col("color").Eq("yellow")))
	df, _ := s.SQL(ctx, "SELECT name FROM yellow ORDER BY name")
	df.Print(ctx, os.Stdout, "csv", format.Options{})
	// Output:
	// name
	// banana
	// lemon
}

func ExampleDataFrame_Head() {
	ctx := context.Background()
	s := exampleSession(ctx)
	defer s.Close()
	n, _ := fruitsDF(ctx, s).Head(3).Count(ctx)
	fmt.Println(n)
	// Output: 3
}

func ExampleDataFrame_ShowRows() {
	ctx := context.Background()
	s := exampleSession(ctx)
	defer s.Close()
	fruitsDF(ctx, s).Select(quiver.Col("name")).Sort(quiver.Col("name").Asc()).ShowRows(ctx, os.Stdout, 2)
	// Output:
	// ┌───────┐
	// │ name  │
	// ├───────┤
	// │ apple │
	// │ …     │
	// │ lemon │
	// └───────┘
	// 4 rows (2 shown)
}

func ExampleDataFrame_Select_star() {
	ctx := context.Background()
	s := exampleSession(ctx)
	defer s.Close()
	df := fruitsDF(ctx, s).Select(quiver.Col("*"), quiver.Col("qty").Mul(2).As("qty2"))
	fmt.Println(df.Schema().NumFields())
	df = fruitsDF(ctx, s).Alias("f").Select(quiver.Col("f.*"))
	fmt.Println(df.Schema().NumFields())
	// Output:
	// 5
	// 4
}

func ExampleDataFrame_Aggregate_composed() {
	ctx := context.Background()
	s := exampleSession(ctx)
	defer s.Close()
	fruitsDF(ctx, s).Aggregate([]quiver.Expr{quiver.Col("color")}, []quiver.Expr{
		quiver.Sum(quiver.Col("qty")).Mul(quiver.Lit(2)).As("twice"),
		quiver.Sum(quiver.Col("qty")).Div(quiver.Count(quiver.Col("*"))).As("per_row"),
	}).Sort(quiver.Col("color").Asc()).Print(ctx, os.Stdout, "csv", format.Options{})
	// Output:
	// color,twice,per_row
	// red,20,5
	// yellow,64,16
}

func ExampleSession_ReadCSV() {
	ctx := context.Background()
	s, _ := quiver.NewSession(ctx)
	defer s.Close()
	// The delimiter ('|'), the header and the types are sniffed.
	df, err := s.ReadCSV(ctx, []string{"testdata/slt/data/files/pipe.csv"})
	if err != nil {
		panic(err)
	}
	df.Select(quiver.Col("name"), quiver.Col("price")).Sort(quiver.Col("price").Desc()).Print(ctx, os.Stdout, "csv", format.Options{})
	// Output:
	// name,price
	// "pear, green",2.25
	// apple,1.5
	// ,0.5
}

func ExampleSession_ReadParquet() {
	ctx := context.Background()
	s, _ := quiver.NewSession(ctx)
	defer s.Close()
	df, err := s.ReadParquet(ctx, []string{"tpch/sf0.01/nation.parquet", "tpch/sf0.01/nation.parquet"})
	if err != nil {
		panic(err)
	}
	n, _ := df.Count(ctx)
	fmt.Println(n) // a file named twice is read once
	// Output: 25
}

func ExampleSession_ReadJSON() {
	ctx := context.Background()
	s, _ := quiver.NewSession(ctx)
	defer s.Close()
	df, err := s.ReadJSON(ctx, []string{"testdata/slt/data/files/people.ndjson"})
	if err != nil {
		panic(err)
	}
	df.Select(quiver.Col("id"), quiver.Col("name")).Sort(quiver.Col("id").Asc()).Print(ctx, os.Stdout, "csv", format.Options{})
	// Output:
	// id,name
	// 1,ann
	// 2,bob
	// 3,
}

func ExampleDataFrame_WriteJSON() {
	ctx := context.Background()
	s := exampleSession(ctx)
	defer s.Close()
	dir, _ := os.MkdirTemp("", "quiver-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "red.json")
	if err := fruitsDF(ctx, s).Filter(quiver.Col("color").Eq("red")).Select(quiver.Col("name"), quiver.Col("qty")).
		Sort(quiver.Col("name").Asc()).WriteJSON(ctx, path); err != nil {
		panic(err)
	}
	b, _ := os.ReadFile(path)
	fmt.Print(string(b))
	// Output:
	// {"name":"apple","qty":10}
	// {"name":"cherry","qty":null}
}

func ExampleDataFrame_WriteParquet_partitioned() {
	ctx := context.Background()
	s := exampleSession(ctx)
	defer s.Close()
	dir, _ := os.MkdirTemp("", "quiver-example")
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "by_color")
	if err := fruitsDF(ctx, s).WriteParquet(ctx, out, quiver.PartitionBy("color")); err != nil {
		panic(err)
	}
	ents, _ := os.ReadDir(out)
	for _, e := range ents {
		fmt.Println(e.Name())
	}
	df, _ := s.ReadParquet(ctx, []string{out})
	n, _ := df.Filter(quiver.Col("color").Eq("yellow")).Count(ctx)
	fmt.Println(n)
	// Output:
	// color=red
	// color=yellow
	// 2
}

func ExampleExpr_Over() {
	ctx := context.Background()
	s := exampleSession(ctx)
	defer s.Close()
	byColor := quiver.Window().PartitionBy(quiver.Col("color")).OrderBy(quiver.Col("price").Desc())
	df := fruitsDF(ctx, s).
		Select(quiver.Col("name"), quiver.Col("color"),
			quiver.RowNumber().Over(byColor).As("rank_in_color"),
			quiver.Sum(quiver.Col("price")).Over(quiver.Window().OrderBy(quiver.Col("name").Asc()).Rows(-1, 0)).As("pair_price")).
		Sort(quiver.Col("name").Asc())
	df.Show(ctx, os.Stdout)
	// Output:
	// ┌────────┬────────┬───────────────┬────────────┐
	// │ name   │ color  │ rank_in_color │ pair_price │
	// ├────────┼────────┼───────────────┼────────────┤
	// │ apple  │ red    │             2 │       1.20 │
	// │ banana │ yellow │             2 │       1.70 │
	// │ cherry │ red    │             1 │       3.50 │
	// │ lemon  │ yellow │             1 │       3.80 │
	// └────────┴────────┴───────────────┴────────────┘
}
