// A second independent check of the crawler's Web Bot Auth signatures, with
// Cloudflare's `web-bot-auth` npm library (and the `http-message-sig` library
// it is built on), which shares no code with the crawler. The library reads
// `Signature-Agent` whole (it cannot select a dictionary member), so it checks
// the string form.
//
//   node web_bot_auth.cjs requests REQUESTS.json AGENT X
//       verify every request (string form); print {"verified", "keyids"}
//   node web_bot_auth.cjs directory RESPONSE.txt AGENT X
//       verify the signed key-directory response `scraper keys --response` printed
//
// Modules are found through NODE_PATH (the test points it at the npm install
// .ci/run makes under target/).
"use strict";
const fs = require("fs");
const { verify } = require("web-bot-auth");
const { verifierFromJWK } = require("web-bot-auth/crypto");
const httpsig = require("http-message-sig");

function headerObject(pairs) {
  const out = {};
  for (const [k, v] of pairs) {
    const name = k.toLowerCase();
    out[name] = name in out ? `${out[name]}, ${v}` : v;
  }
  return out;
}

async function requests(file, agent, x) {
  const key = await verifierFromJWK({ kty: "OKP", crv: "Ed25519", x });
  const list = JSON.parse(fs.readFileSync(file, "utf8"));
  const failures = [];
  const keyids = new Set();
  for (const r of list) {
    const headers = headerObject(r.headers);
    const message = { method: r.method, url: r.url, headers };
    try {
      if (headers["signature-agent"] !== `"${agent}"`) {
        throw new Error(`Signature-Agent ${headers["signature-agent"]}`);
      }
      if (!/\("@authority" "signature-agent"\)/.test(headers["signature-input"] || "")) {
        throw new Error(`components ${headers["signature-input"]}`);
      }
      await verify(message, async (data, signature, params) => {
        keyids.add(params.keyid);
        return key(data, signature, params);
      });
    } catch (e) {
      failures.push(`${r.method} ${r.url}: ${e.message}`);
    }
  }
  if (failures.length) {
    console.error(failures.join("\n"));
    process.exit(1);
  }
  console.log(JSON.stringify({ verified: list.length, keyids: [...keyids] }));
}

async function directory(file, agent, x) {
  const key = await verifierFromJWK({ kty: "OKP", crv: "Ed25519", x });
  const text = fs.readFileSync(file, "utf8");
  const [head, body] = text.split("\r\n\r\n");
  const lines = head.split("\r\n");
  if (!/^HTTP\/1\.1 200/.test(lines[0])) throw new Error(`status line ${lines[0]}`);
  const headers = {};
  for (const l of lines.slice(1)) {
    const i = l.indexOf(":");
    headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
  }
  const keys = JSON.parse(body).keys;
  if (!keys.some((k) => k.x === x)) throw new Error("the key is not in the directory");
  const url = new URL("/.well-known/http-message-signatures-directory", agent).toString();
  const message = {
    request: { method: "GET", url, headers: {} },
    response: { status: 200, headers },
  };
  let tag;
  await httpsig.verify(message, async (data, signature, params) => {
    tag = params.tag;
    return key(data, signature, params);
  });
  if (tag !== "http-message-signatures-directory") throw new Error(`tag ${tag}`);
  console.log(JSON.stringify({ verified: 1, type: headers["content-type"] }));
}

const [what, file, agent, x] = process.argv.slice(2);
(what === "directory" ? directory : requests)(file, agent, x).catch((e) => {
  console.error(e.stack || String(e));
  process.exit(1);
});
