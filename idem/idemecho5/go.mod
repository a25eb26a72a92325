module exactlyonce/idem/idemecho5

go 1.27.3

require (
	exactlyonce/idem v0.0.0
	github.com/jackc/pgx/v5 v5.13.0
	github.com/labstack/echo/v5 v5.4.6
)

require (
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	golang.org/x/sync v0.23.0 // indirect
	golang.org/x/text v0.42.0 // indirect
	golang.org/x/time v0.15.0 // indirect
)

replace exactlyonce/idem => ../
