package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// runAdvise is `folio advise`: it asks a running server for its advisor's
// findings (the folioAdvise command) and prints them, most costly first,
// as a readable report or as JSON.
func runAdvise(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("folio advise", flag.ContinueOnError)
	fs.SetOutput(stderr)
	uri := fs.String("uri", "mongodb://127.0.0.1:27017/", "the server to ask (a MongoDB URI; credentials in it when -auth is on: the user needs clusterMonitor)")
	asJSON := fs.Bool("json", false, "print the findings as a JSON array")
	db := fs.String("db", "", "only the findings on this database")
	reset := fs.Bool("reset", false, "forget the observations after this report")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: folio advise [flags]\n\nWhat the server saw, as the schema patterns that would fix it (docs/patterns.md, \"What folio advise says\").\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return nil
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client, err := mongo.Connect(options.Client().ApplyURI(*uri))
	if err != nil {
		return err
	}
	defer func() { _ = client.Disconnect(context.Background()) }()
	cmd := bson.D{{Key: "folioAdvise", Value: 1}}
	if *db != "" {
		cmd = append(cmd, bson.E{Key: "db", Value: *db})
	}
	if *reset {
		cmd = append(cmd, bson.E{Key: "reset", Value: true})
	}
	reply, err := client.Database("admin").RunCommand(ctx, cmd).Raw()
	if err != nil {
		return err
	}
	findings, _ := reply.Lookup("findings").Array().Values()
	if *asJSON {
		fmt.Fprint(stdout, "[")
		for i, f := range findings {
			js, err := bson.MarshalExtJSON(f.Document(), false, false)
			if err != nil {
				return err
			}
			if i > 0 {
				fmt.Fprint(stdout, ",")
			}
			fmt.Fprintf(stdout, "\n  %s", js)
		}
		fmt.Fprintln(stdout, "\n]")
		return nil
	}
	since, _ := reply.Lookup("observedSince").TimeOK()
	fmt.Fprintf(stdout, "folio advise: %d findings (observed since %s)\n", len(findings), since.UTC().Format(time.RFC3339))
	for i, v := range findings {
		f := v.Document()
		where := f.Lookup("ns").StringValue()
		for _, k := range []string{"field", "shape"} {
			if s, ok := f.Lookup(k).StringValueOK(); ok {
				where += "  " + s
			}
		}
		fmt.Fprintf(stdout, "\n%d. %s  %s\n", i+1, f.Lookup("kind").StringValue(), where)
		var ev []string
		elems, _ := f.Lookup("evidence").Document().Elements()
		for _, e := range elems {
			ev = append(ev, e.Key()+" "+plain(e.Value()))
		}
		fmt.Fprintf(stdout, "   evidence: %s\n   pattern: %s\n   suggestion: %s\n", strings.Join(ev, ", "), f.Lookup("pattern").StringValue(), f.Lookup("suggestion").StringValue())
	}
	return nil
}

// plain is a value as the report shows it: strings bare, numbers and
// dates in their usual form.
func plain(v bson.RawValue) string {
	switch v.Type {
	case bson.TypeString:
		return v.StringValue()
	case bson.TypeDouble:
		return fmt.Sprintf("%.2f", v.Double())
	case bson.TypeDateTime:
		return v.Time().UTC().Format(time.RFC3339)
	}
	if n, ok := v.AsInt64OK(); ok {
		return fmt.Sprint(n)
	}
	return v.String()
}
