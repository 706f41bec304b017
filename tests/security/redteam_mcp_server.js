// A minimal MCP server in JavaScript (stdio, newline-delimited JSON-RPC, no packages), as
// a server written in JS parses its arguments: JSON.parse, numbers as doubles. The
// "transfer" tool appends the account it acts on to the file named by REDTEAM_LOG.
const fs = require("fs");
const readline = require("readline");
const rl = readline.createInterface({ input: process.stdin });
const send = (msg) => process.stdout.write(JSON.stringify(msg) + "\n");
rl.on("line", (line) => {
  if (!line.trim()) return;
  const msg = JSON.parse(line);
  if (msg.id === undefined) return; // a notification
  if (msg.method === "initialize") {
    send({ jsonrpc: "2.0", id: msg.id, result: {
      protocolVersion: msg.params.protocolVersion,
      capabilities: { tools: {} },
      serverInfo: { name: "redteam-js", version: "0.1" } } });
  } else if (msg.method === "tools/list") {
    send({ jsonrpc: "2.0", id: msg.id, result: { tools: [{
      name: "transfer",
      description: "Move money to an account (logged).",
      inputSchema: { type: "object", properties: { account: { type: "integer" },
        amount: { type: "integer" } }, required: ["account", "amount"] } }] } });
  } else if (msg.method === "tools/call") {
    const a = msg.params.arguments;
    fs.appendFileSync(process.env.REDTEAM_LOG, `transfer ${a.amount} to ${a.account}\n`);
    send({ jsonrpc: "2.0", id: msg.id, result: {
      content: [{ type: "text", text: `sent to ${a.account}` }] } });
  } else {
    send({ jsonrpc: "2.0", id: msg.id, error: { code: -32601, message: "no such method" } });
  }
});
