// Preloaded with `node --import`: every fetch goes to the local fake server named by
// STEERBENCH_FAKE_ORIGIN (http://127.0.0.1:PORT), keeping the request's path and options.
const origin = process.env.STEERBENCH_FAKE_ORIGIN;
if (!origin || !origin.startsWith("http://127.0.0.1:")) {
  throw new Error("STEERBENCH_FAKE_ORIGIN must name a server on 127.0.0.1");
}
const realFetch = globalThis.fetch;
globalThis.fetch = (resource, options) => {
  const url = new URL(typeof resource === "string" ? resource : resource.url);
  return realFetch(new URL(url.pathname + url.search, origin), options);
};
