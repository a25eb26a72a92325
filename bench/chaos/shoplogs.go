package chaos

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
)

// loggedFailures are the 5xx answers the shops' logs hold, by status, and
// each 500. The logs see every answer a shop gave, also those to a
// client that had hung up: a finish held by a lock or a stalled server
// answers 503 after FinishTimeout (10 s), long after the client's own
// timeout (5 s), and only the log can tell that it was not a 500.
type loggedFailures struct {
	statuses  map[string]int
	errors500 []string
}

// readShopLogs reads the request lines of every shop's log.
func (cl *cluster) readShopLogs() (loggedFailures, error) {
	lf := loggedFailures{statuses: map[string]int{}}
	for _, p := range cl.shops {
		f, err := os.Open(p.logPath)
		if err != nil {
			return lf, err
		}
		err = lf.read(f, p.name)
		f.Close()
		if err != nil {
			return lf, fmt.Errorf("read %s: %w", p.logPath, err)
		}
	}
	return lf, nil
}

// read counts the 5xx request lines of one shop's JSON log (LOG_FORMAT=json:
// the request logger's line, msg "request", carries the status), and names
// each 500 with the error the error handler logged for it just before
// (msg "request failed", the same request id), so that a 500 a CI run
// meets can be read from its report alone. Lines that are not JSON (a
// panic's trace) are skipped.
func (lf *loggedFailures) read(r io.Reader, shop string) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	failed := map[string]string{} // a 500's error, by request id, until its request line
	for sc.Scan() {
		var line struct {
			Msg       string `json:"msg"`
			Status    int    `json:"status"`
			Method    string `json:"method"`
			Path      string `json:"path"`
			RequestID string `json:"request_id"`
			Time      string `json:"time"`
			Err       string `json:"err"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil || line.Status < 500 {
			continue
		}
		switch {
		case line.Msg == "request failed" && line.Status == 500:
			failed[line.RequestID] = line.Err
			continue
		case line.Msg != "request":
			continue
		}
		lf.statuses[strconv.Itoa(line.Status)]++
		if line.Status == 500 {
			lf.errors500 = append(lf.errors500, fmt.Sprintf("%s at %s: %s %s (request %s): %s",
				shop, line.Time, line.Method, line.Path, line.RequestID, failed[line.RequestID]))
			delete(failed, line.RequestID)
		}
	}
	return sc.Err()
}
