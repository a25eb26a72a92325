package handlers

import (
	"bytes"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"exactlyonce/static"
)

// asset serves an embedded file of package static. Pages link assets with
// their content hash in ?v=, so a request naming the current hash may be
// cached for good; any other is revalidated against the ETag.
func (h *Handler) asset(c echo.Context) error {
	name := c.Param("name")
	b, err := static.FS.ReadFile(name)
	if err != nil {
		return echo.ErrNotFound
	}
	v := static.Version(name)
	header := c.Response().Header()
	if c.QueryParam("v") == v {
		header.Set(echo.HeaderCacheControl, "public, max-age=31536000, immutable")
	} else {
		header.Set(echo.HeaderCacheControl, "no-cache")
	}
	header.Set("ETag", `"`+v+`"`)
	http.ServeContent(c.Response(), c.Request(), name, time.Time{}, bytes.NewReader(b))
	return nil
}
