// One chat completion through the official OpenAI Node SDK, as a Node agent would make it.
//
// Reads {baseURL, apiKey, body} as JSON on stdin, calls client.chat.completions.create(body)
// and prints one JSON line: what the SDK handed over (content, reasoning_content, tool_calls,
// finish_reason, chunk count), or {error: {status, type, param, code, message}} for an APIError.
// A streamed answer is accumulated here from the SDK's chunks, as an agent loop does.
// With {api: "responses"}: client.responses.create(body), or client.responses.stream(body) and
// its finalResponse() when body.stream is set; the printed line is the Response object.
"use strict";

const OpenAI = require("openai");

async function readStdin() {
  const parts = [];
  for await (const part of process.stdin) parts.push(part);
  return JSON.parse(Buffer.concat(parts).toString("utf8"));
}

function addToolCallDelta(calls, delta) {
  const call = (calls[delta.index] ??= { id: null, name: "", arguments: "" });
  if (delta.id) call.id = delta.id;
  if (delta.function?.name) call.name += delta.function.name;
  if (delta.function?.arguments) call.arguments += delta.function.arguments;
}

async function streamed(client, body) {
  const result = { content: "", reasoning_content: "", tool_calls: [], finish_reason: null };
  let chunks = 0;
  const stream = await client.chat.completions.create(body);
  for await (const chunk of stream) {
    chunks += 1;
    for (const choice of chunk.choices) {
      const delta = choice.delta ?? {};
      if (typeof delta.content === "string") result.content += delta.content;
      if (typeof delta.reasoning_content === "string") {
        result.reasoning_content += delta.reasoning_content;
      }
      for (const call of delta.tool_calls ?? []) addToolCallDelta(result.tool_calls, call);
      if (choice.finish_reason) result.finish_reason = choice.finish_reason;
    }
    if (chunk.usage) result.usage = chunk.usage;
  }
  result.tool_calls = result.tool_calls.filter(Boolean);
  result.chunks = chunks;
  return result;
}

async function whole(client, body) {
  const completion = await client.chat.completions.create(body);
  const choice = completion.choices[0];
  const message = choice.message;
  return {
    content: message.content ?? "",
    reasoning_content: message.reasoning_content ?? "",
    tool_calls: (message.tool_calls ?? []).map((call) => ({
      id: call.id,
      name: call.function.name,
      arguments: call.function.arguments,
    })),
    finish_reason: choice.finish_reason,
    usage: completion.usage,
  };
}

async function responses(client, body) {
  if (!body.stream) return client.responses.create(body);
  const { stream, ...rest } = body;
  const events = client.responses.stream(rest);
  let count = 0;
  events.on("event", () => (count += 1));
  const response = await events.finalResponse();
  return { ...response, events: count };
}

async function main() {
  const { baseURL, apiKey, body, api } = await readStdin();
  const client = new OpenAI({ baseURL, apiKey: apiKey ?? "unused", maxRetries: 0, timeout: 60000 });
  try {
    let result;
    if (api === "responses") result = await responses(client, body);
    else result = body.stream ? await streamed(client, body) : await whole(client, body);
    process.stdout.write(JSON.stringify(result) + "\n");
  } catch (error) {
    if (!(error instanceof OpenAI.APIError)) throw error;
    const { status, type, param, code, message } = error;
    process.stdout.write(JSON.stringify({ error: { status, type, param, code, message } }) + "\n");
  }
}

main().catch((error) => {
  process.stderr.write(String(error?.stack ?? error) + "\n");
  process.exit(1);
});
