package proxy

import (
	"context"
	"net"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/brokerlab/brokerlab/engine/acl"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// Metadata keys RocketMQ 5 clients send on every call.
const (
	mdClientID      = "x-mq-client-id"
	mdLanguage      = "x-mq-language"
	mdNamespace     = "x-mq-namespace"
	mdDateTime      = "x-mq-date-time"
	mdRequestID     = "x-mq-request-id"
	mdAuthorization = "authorization"
)

// call is what one gRPC call carries besides its message.
type call struct {
	clientID, language, namespace string
	remote                        string // peer address
	accessKey, secretKey          string // set when the call was signed and verified
}

type callKey struct{}

func callOf(ctx context.Context) *call {
	c, _ := ctx.Value(callKey{}).(*call)
	return c
}

func first(md metadata.MD, k string) string {
	if v := md.Get(k); len(v) > 0 {
		return v[0]
	}
	return ""
}

// authenticate reads the metadata and, with an ACL, verifies the signature.
func (s *Server) authenticate(ctx context.Context) (context.Context, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	c := &call{clientID: first(md, mdClientID), language: first(md, mdLanguage), namespace: first(md, mdNamespace)}
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		c.remote = p.Addr.String()
	}
	if s.cfg.ACL != nil {
		if auth := first(md, mdAuthorization); auth != "" {
			ak, sig, ok := parseAuthorization(auth)
			if !ok {
				return nil, status.Error(codes.Unauthenticated, "malformed authorization header")
			}
			sk, ok := s.cfg.ACL.Rules().SecretKey(ak)
			if !ok {
				return nil, status.Errorf(codes.Unauthenticated, "no account for accessKey=%s", ak)
			}
			if !acl.VerifyHex([]byte(first(md, mdDateTime)), sk, sig) {
				return nil, status.Errorf(codes.Unauthenticated, "signature check failed for accessKey=%s", ak)
			}
			c.accessKey, c.secretKey = ak, sk
		}
	}
	return context.WithValue(ctx, callKey{}, c), nil
}

// parseAuthorization reads "MQv2-HMAC-SHA1 Credential=AK/..., SignedHeaders=x-mq-date-time, Signature=HEX".
func parseAuthorization(h string) (ak, sig string, ok bool) {
	_, rest, found := strings.Cut(h, " ")
	if !found {
		return "", "", false
	}
	for part := range strings.SplitSeq(rest, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "Credential":
			ak, _, _ = strings.Cut(v, "/")
		case "Signature":
			sig = v
		}
	}
	return ak, sig, ak != "" && sig != ""
}

func (s *Server) unaryAuth(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	ctx, err := s.authenticate(ctx)
	if err != nil {
		return nil, err
	}
	return h(ctx, req)
}

type authStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (a authStream) Context() context.Context { return a.ctx }

func (s *Server) streamAuth(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	ctx, err := s.authenticate(ss.Context())
	if err != nil {
		return err
	}
	return h(srv, authStream{ss, ctx})
}

// authorize checks, with an ACL, the remoting request a call turns into
// against the plain-ACL rules with the caller's address; nil lets it through.
func (s *Server) authorize(ctx context.Context, code int32, ext remoting.ExtFields, body []byte) error {
	if s.cfg.ACL == nil {
		return nil
	}
	c := callOf(ctx)
	if c == nil {
		c = &call{}
	}
	signed := make(map[string]string, len(ext)+2)
	for k, v := range ext {
		signed[k] = v
	}
	if c.secretKey != "" {
		acl.Sign(signed, body, 0, c.accessKey, c.secretKey, "")
	}
	host := c.remote
	if h, _, err := net.SplitHostPort(c.remote); err == nil {
		host = h
	}
	return s.cfg.ACL.Check(acl.Request{Code: code, CodeName: protocol.RequestCodeName(code), RemoteAddr: host, Ext: signed, Body: body})
}
