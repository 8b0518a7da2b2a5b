/**
 * JSON with object keys sorted (undefined members left out), so `{a, b}` and `{b, a}` are one
 * key: how the HTTP bench and the SDK reference name the answer to a call's arguments.
 */
export function canonicalJson(value) {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    return `{${Object.keys(value)
      .sort()
      .filter((key) => value[key] !== undefined)
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The key of one call's answer: the tool's name and its canonical arguments. */
export function answerKey(tool, args) {
  return `${tool} ${canonicalJson(args)}`;
}
