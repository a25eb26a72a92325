package hapg

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
)

// layoutFile records the ports a formation was created with: pg_autoctl
// keeps them in each node's configuration too, but in files of its own
// format, under paths derived from each data directory.
const layoutFile = "formation.json"

// layout is what a later Start needs to find a formation again.
type layout struct {
	MonitorPort int   `json:"monitor_port"`
	NodePorts   []int `json:"node_ports"`
}

// nodeNames are the names of a formation's data nodes, as pg_autoctl
// registers them: node1, node2 and, with two standbys, node3.
func nodeNames(standbys int) []string {
	names := make([]string, 1+standbys)
	for i := range names {
		names[i] = "node" + strconv.Itoa(i+1)
	}
	return names
}

func readLayout(dir string) (layout, bool, error) {
	b, err := os.ReadFile(filepath.Join(dir, layoutFile))
	if errors.Is(err, fs.ErrNotExist) {
		return layout{}, false, nil
	}
	if err != nil {
		return layout{}, false, err
	}
	var l layout
	if err := json.Unmarshal(b, &l); err != nil {
		return layout{}, false, fmt.Errorf("%s: %w", layoutFile, err)
	}
	if len(l.NodePorts) < 2 {
		return layout{}, false, fmt.Errorf("%s: %d node ports, want at least 2", layoutFile, len(l.NodePorts))
	}
	return l, true, nil
}

// writeLayout is the last step of a creation, so that a Start that failed
// half-way leaves no formation.json that a later Start would take for a
// formation.
func writeLayout(dir string, l layout) error {
	b, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, layoutFile), append(b, '\n'), 0o644)
}

// freePorts returns n loopback TCP ports that nothing listens on now, taken
// below Linux's ephemeral range (32768 and up by default), where outgoing
// connections take their source ports and could hold one when a reused
// formation starts again. They are held open together while chosen, so
// that the n differ; another program could still take one before
// PostgreSQL does, which then fails to start and says why.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for tries := 0; len(ports) < n; tries++ {
		if tries == 1000 {
			return nil, fmt.Errorf("no free port found between %d and %d", minPort, maxPort)
		}
		port := minPort + rand.IntN(maxPort-minPort)
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			continue
		}
		defer ln.Close()
		ports = append(ports, port)
	}
	return ports, nil
}

const minPort, maxPort = 20000, 32000
