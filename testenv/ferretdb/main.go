// Command ferretdb starts FerretDB (SQLite backend) as the tests' MongoDB-wire server.
//
// It embeds FerretDB's library instead of building its cmd/ferretdb: built as its own main
// module, cmd/ferretdb panics at start because the module zip lacks the generated version file.
package main

import (
	"context"
	"flag"
	"log"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	listen := flag.String("listen-addr", "127.0.0.1:27018", "TCP address to listen on")
	sqliteURL := flag.String("sqlite-url", "", "SQLite URL: file:/absolute/existing/dir/")
	level := flag.String("log-level", "warn", "debug, info, warn or error")
	flag.Parse()
	if *sqliteURL == "" {
		log.Fatal("--sqlite-url is required (file:/absolute/existing/dir/)")
	}

	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*level)); err != nil {
		log.Fatalf("--log-level %q: %v", *level, err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lvl}))

	f, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: *listen},
		Logger:    logger,
		Handler:   "sqlite",
		SQLiteURL: *sqliteURL,
	})
	if err != nil {
		log.Fatal(err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := f.Run(ctx); err != nil && ctx.Err() == nil {
		log.Fatal(err)
	}
}
