package commands

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

func init() {
	registerAdmin(rotateCertificatesCmd, &argSpec{path: "rotateCertificates", fields: []argField{arg("message", tString)}}, "rotateCertificates")
	authzRules["rotateCertificates"] = onCluster("rotateCertificates")
}

// rotateCertificatesCmd reads the TLS certificate key file and CA file
// again ({rotateCertificates: 1, message?}): connections made afterwards
// use their new content, open ones keep theirs. Should a file not be
// usable, the certificates in use stay and the command fails with
// InvalidSSLConfiguration. Without TLS there is nothing to rotate and,
// as in MongoDB, the command succeeds. The message is logged.
// https://www.mongodb.com/docs/v7.0/reference/command/rotateCertificates/
func rotateCertificatesCmd(s *Service, r *Request) (bson.Raw, error) {
	if s.RotateCertificates != nil {
		if err := s.RotateCertificates(); err != nil {
			if s.Log != nil {
				s.Log.Error("Certificate rotation failed; the certificates in use stay", "error", err)
			}
			return nil, mongoerr.New(mongoerr.InvalidSSLConfiguration, "%s", err.Error())
		}
	}
	if s.Log != nil {
		s.Log.Info("Certificate rotation completed successfully", "message", r.args.str("message"))
	}
	return nil, nil
}
