package api

import (
	"errors"
	"fmt"
	"strings"

	"github.com/golang-jwt/jwt/v5"
)

// JWTConfig makes the API accept JSON Web Tokens besides its static tokens.
// It is off unless HS256Secret or PublicKeyPEM is set.
type JWTConfig struct {
	// HS256Secret verifies HS256 tokens. Optional; at least 32 bytes.
	HS256Secret []byte
	// PublicKeyPEM verifies RS256 (RSA key) or ES256 (P-256 key) tokens: a
	// PEM public key. Optional; not together with HS256Secret.
	PublicKeyPEM []byte
	// Issuer is the required iss claim. Required when JWTs are on.
	Issuer string
	// Audience is a required aud value. Required when JWTs are on.
	Audience string
}

func (c JWTConfig) enabled() bool { return len(c.HS256Secret) > 0 || len(c.PublicKeyPEM) > 0 }

// minHS256Secret is the key size RFC 7518 §3.2 requires for HS256.
const minHS256Secret = 32

func (c JWTConfig) validate() error {
	if !c.enabled() {
		return nil
	}
	var errs []error
	if len(c.HS256Secret) > 0 && len(c.PublicKeyPEM) > 0 {
		errs = append(errs, errors.New("api: JWT: set HS256Secret or PublicKeyPEM, not both"))
	}
	if len(c.HS256Secret) > 0 && len(c.HS256Secret) < minHS256Secret {
		errs = append(errs, fmt.Errorf("api: JWT: HS256Secret must be at least %d bytes", minHS256Secret))
	}
	if c.Issuer == "" || c.Audience == "" {
		errs = append(errs, errors.New("api: JWT: Issuer and Audience are required"))
	}
	if len(c.PublicKeyPEM) > 0 {
		if _, _, err := publicKey(c.PublicKeyPEM); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// publicKey parses an RSA or EC public key and names its algorithm.
func publicKey(pem []byte) (any, string, error) {
	if k, err := jwt.ParseRSAPublicKeyFromPEM(pem); err == nil {
		return k, jwt.SigningMethodRS256.Alg(), nil
	}
	if k, err := jwt.ParseECPublicKeyFromPEM(pem); err == nil {
		return k, jwt.SigningMethodES256.Alg(), nil
	}
	return nil, "", errors.New("api: JWT: PublicKeyPEM is neither an RSA nor an EC public key")
}

// jwtClaims are the claims a token maps to a principal with: tenant, sub
// (the actor) and scope (space-separated scopes; absent means read).
type jwtClaims struct {
	jwt.RegisteredClaims
	Tenant string `json:"tenant"`
	Scope  string `json:"scope"`
}

// jwtVerifier checks signature, algorithm, exp, nbf, iss and aud.
type jwtVerifier struct {
	parser *jwt.Parser
	key    any
}

func newJWTVerifier(c JWTConfig) (*jwtVerifier, error) {
	if !c.enabled() {
		return nil, nil
	}
	key, alg := any(c.HS256Secret), jwt.SigningMethodHS256.Alg()
	if len(c.PublicKeyPEM) > 0 {
		var err error
		if key, alg, err = publicKey(c.PublicKeyPEM); err != nil {
			return nil, err
		}
	}
	// One algorithm only: alg "none" and key confusion (an HS256 token
	// signed with the public key) fail before the signature is checked.
	p := jwt.NewParser(jwt.WithValidMethods([]string{alg}), jwt.WithIssuer(c.Issuer),
		jwt.WithAudience(c.Audience), jwt.WithExpirationRequired(), jwt.WithIssuedAt())
	return &jwtVerifier{parser: p, key: key}, nil
}

// principal verifies token and maps its claims to a principal.
func (v *jwtVerifier) principal(token string) (Principal, error) {
	var c jwtClaims
	if _, err := v.parser.ParseWithClaims(token, &c, func(*jwt.Token) (any, error) { return v.key, nil }); err != nil {
		return Principal{}, fmt.Errorf("verify JWT: %w", err)
	}
	p := Principal{Tenant: c.Tenant, Actor: c.Subject, Scopes: []Scope{ScopeRead}}
	if c.Scope != "" {
		p.Scopes = nil
		for _, s := range strings.Fields(c.Scope) {
			p.Scopes = append(p.Scopes, Scope(s))
		}
	}
	return p, p.validate()
}
