# An independent check of the crawler's Web Bot Auth signatures: the key is
# made here with `cryptography`, its JWK thumbprint computed here (RFC 7638),
# and every captured request verified by the `http-message-signatures`
# library (RFC 9421), none of which shares code with the crawler.
#
#   gen KEYFILE                  write a new Ed25519 key (PEM PKCS#8 v1); print {"x", "thumbprint"}
#   verify REQUESTS.json AGENT X [FORM]
#                                verify every request, FORM `dictionary` (default) or
#                                `string`; print {"verified", "nonces", "created"}
import base64
import datetime
import hashlib
import json
import sys

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from http_message_signatures import HTTPMessageVerifier, HTTPSignatureKeyResolver, algorithms


def b64url(raw):
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def thumbprint(x):
    canonical = json.dumps({"crv": "Ed25519", "kty": "OKP", "x": x}, separators=(",", ":"), sort_keys=True)
    return b64url(hashlib.sha256(canonical.encode()).digest())


def gen(path):
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    with open(path, "wb") as f:
        f.write(pem)
    x = b64url(key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw))
    print(json.dumps({"x": x, "thumbprint": thumbprint(x)}))


class Headers:
    def __init__(self, pairs):
        self.pairs = [(k, v) for k, v in pairs]

    def items(self):
        return list(self.pairs)

    def __iter__(self):
        return iter(dict.fromkeys(k for k, _ in self.pairs))

    def __contains__(self, name):
        return any(k.lower() == name.lower() for k, _ in self.pairs)


class Request:
    def __init__(self, method, url, headers):
        self.method = method
        self.url = url
        self.headers = Headers(headers)


class Keys(HTTPSignatureKeyResolver):
    def __init__(self, x):
        self.keyid = thumbprint(x)
        self.key = Ed25519PublicKey.from_public_bytes(base64.urlsafe_b64decode(x + "=" * (-len(x) % 4)))

    def resolve_public_key(self, key_id):
        return self.key if key_id == self.keyid else None


def verify(requests_file, agent, x, form="dictionary"):
    if form == "string":
        agent_component, agent_value = '"signature-agent"', f'"{agent}"'
    else:
        agent_component, agent_value = '"signature-agent";key="sig1"', f'sig1="{agent}"'
    with open(requests_file) as f:
        requests = json.load(f)
    verifier = HTTPMessageVerifier(signature_algorithm=algorithms.ED25519, key_resolver=Keys(x))
    nonces, created, failures = set(), [], []
    for r in requests:
        msg = Request(r["method"], r["url"], r["headers"])
        try:
            results = verifier.verify(
                msg,
                max_age=datetime.timedelta(minutes=5),
                expect_tag="web-bot-auth",
                require_components=["@authority", agent_component],
            )
        except Exception as e:  # noqa: BLE001 - every failure is reported
            failures.append(f"{r['method']} {r['url']}: {e!r}")
            continue
        params = results[0].parameters
        sa = [v for k, v in r["headers"] if k.lower() == "signature-agent"]
        if sa != [agent_value]:
            failures.append(f"{r['url']}: Signature-Agent {sa}")
        if params.get("alg") != "ed25519" or params["expires"] <= params["created"]:
            failures.append(f"{r['url']}: parameters {params}")
        nonces.add(params.get("nonce"))
        created.append(params["created"])
    if failures:
        print("\n".join(failures), file=sys.stderr)
        sys.exit(1)
    print(json.dumps({"verified": len(requests), "nonces": len(nonces), "created": created}))


if __name__ == "__main__":
    if sys.argv[1] == "gen":
        gen(sys.argv[2])
    else:
        verify(*sys.argv[2:])
