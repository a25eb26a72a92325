package idem

import "embed"

// Migrations holds the kit's schema as goose migrations. Apply them with a
// goose provider of their own (its own version table), so that they number
// independently of the application's:
//
//	store := gooseDatabase.NewStore(gooseDatabase.DialectPostgres, "idem_db_version")
//	p, err := goose.NewProvider("", db, idem.Migrations, goose.WithStore(store))
//
//go:embed migrations/*.sql
var Migrations embed.FS
