// Command ferretdb starts FerretDB as the tests' MongoDB-wire server, on PostgreSQL
// (--postgresql-url) or on SQLite (--sqlite-url).
//
// It embeds FerretDB's library instead of building its cmd/ferretdb: built as its own main
// module, cmd/ferretdb panics at start because the module zip lacks the generated version file.
//
// --setup-user and --setup-password turn on SCRAM authentication and create that user in the
// admin database; testenv/build adds what it takes to FerretDB (overlay/registry_auth.go.in).
package main

import (
	"context"
	"flag"
	"log"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"
	"github.com/jackc/pgx/v5"
)

func main() {
	listen := flag.String("listen-addr", "127.0.0.1:27018", "TCP address to listen on")
	postgresqlURL := flag.String("postgresql-url", "", "PostgreSQL URL: postgres://user@host:port/database")
	sqliteURL := flag.String("sqlite-url", "", "SQLite URL: file:/absolute/existing/dir/")
	level := flag.String("log-level", "warn", "debug, info, warn or error")
	user := flag.String("setup-user", "", "with authentication on, the user created in admin")
	pass := flag.String("setup-password", "", "that user's password")
	flag.Parse()
	if *user != "" {
		if *pass == "" {
			log.Fatal("--setup-user needs --setup-password")
		}
		os.Setenv("MONGOBENCH_FERRETDB_USER", *user)
		os.Setenv("MONGOBENCH_FERRETDB_PASSWORD", *pass)
	}

	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*level)); err != nil {
		log.Fatalf("--log-level %q: %v", *level, err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lvl}))

	config := &ferretdb.Config{
		Listener: ferretdb.ListenerConfig{TCP: *listen},
		Logger:   logger,
	}
	switch {
	case (*postgresqlURL == "") == (*sqliteURL == ""):
		log.Fatal("exactly one of --postgresql-url (postgres://user@host:port/database) " +
			"or --sqlite-url (file:/absolute/existing/dir/) is required")
	case *postgresqlURL != "":
		// FerretDB opens its connection pool at the first client request: check the database
		// now, so a wrong URL or a stopped server fails the start instead of the first query.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		conn, err := pgx.Connect(ctx, *postgresqlURL)
		if err != nil {
			log.Fatalf("PostgreSQL at --postgresql-url=%s is not usable: %v", *postgresqlURL, err)
		}
		_ = conn.Close(ctx)
		cancel()
		config.Handler, config.PostgreSQLURL = "postgresql", *postgresqlURL
	default:
		config.Handler, config.SQLiteURL = "sqlite", *sqliteURL
	}

	f, err := ferretdb.New(config)
	if err != nil {
		log.Fatal(err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := f.Run(ctx); err != nil && ctx.Err() == nil {
		log.Fatal(err)
	}
}
