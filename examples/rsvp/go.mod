module example.com/rsvp

go 1.27.3

tool github.com/a-h/templ/cmd/templ

require (
	exactlyonce/idem v0.0.0
	exactlyonce/idem/idemecho5 v0.0.0
	github.com/a-h/templ v0.3.1118
	github.com/jackc/pgx/v5 v5.13.0
	github.com/labstack/echo/v5 v5.4.6
	golang.org/x/net v0.62.0
)

require (
	github.com/a-h/parse v0.0.42 // indirect
	github.com/andybalholm/brotli v1.3.0 // indirect
	github.com/cenkalti/backoff/v4 v4.3.0 // indirect
	github.com/cli/browser v1.3.0 // indirect
	github.com/fatih/color v1.19.0 // indirect
	github.com/fsnotify/fsnotify v1.10.1 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	github.com/mattn/go-colorable v0.1.16 // indirect
	github.com/mattn/go-isatty v0.0.24 // indirect
	github.com/natefinch/atomic v1.0.1 // indirect
	golang.org/x/mod v0.43.0 // indirect
	golang.org/x/sync v0.25.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	golang.org/x/tools v0.52.0 // indirect
)

replace exactlyonce/idem => ../../idem

replace exactlyonce/idem/idemecho5 => ../../idem/idemecho5
