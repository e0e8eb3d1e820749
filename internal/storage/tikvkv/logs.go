package tikvkv

import (
	"os"

	"github.com/pingcap/log"
	"go.uber.org/zap/zapcore"
)

// quietLogs sets client-go's log level (its logger is process-wide), unless
// FOLIO_TIKV_LOG names one (debug, info, warn, error).
func quietLogs(level zapcore.Level) {
	if name := os.Getenv("FOLIO_TIKV_LOG"); name != "" {
		if err := level.UnmarshalText([]byte(name)); err != nil {
			return
		}
	}
	log.SetLevel(level)
}
