package benchkit

import (
	"encoding/json"
	"fmt"
	"os"
)

// WriteJSON writes a report to path, indented for reading and diffing.
func WriteJSON(path string, r any) error {
	body, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	if err := os.WriteFile(path, append(body, '\n'), 0o644); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}
