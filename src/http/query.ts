/**
 * Binds a query string to a capability's input: each parameter is coerced by the type its input
 * schema declares, so `limit=5` reaches the schema as the number 5. What cannot be coerced is
 * passed on as text and the schema refuses it with a precise message.
 */
import type { JsonSchema } from '../registry/catalog.js';

function declaredTypes(property: JsonSchema | undefined): string[] {
  if (!property) return [];
  if (typeof property.type === 'string') return [property.type];
  if (Array.isArray(property.type)) return property.type.filter((t): t is string => typeof t === 'string');
  const variants = (property.anyOf ?? property.oneOf) as JsonSchema[] | undefined;
  return variants ? variants.flatMap(declaredTypes) : [];
}

function coerce(value: string, types: readonly string[]): unknown {
  if ((types.includes('integer') || types.includes('number')) && /^-?\d+(\.\d+)?$/.test(value)) return Number(value);
  if (types.includes('boolean') && (value === 'true' || value === 'false')) return value === 'true';
  return value;
}

export function inputFromQuery(query: string, schema: JsonSchema): Record<string, unknown> {
  const params = new URLSearchParams(query);
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  // No prototype: a key such as `__proto__` is an own (unknown) key the schema refuses, never the
  // object's prototype.
  const input = Object.create(null) as Record<string, unknown>;
  for (const key of new Set(params.keys())) {
    const values = params.getAll(key);
    const property = properties[key];
    const types = declaredTypes(property);
    if (types.includes('array')) {
      const itemTypes = declaredTypes(property?.items as JsonSchema | undefined);
      input[key] = values.map((v) => coerce(v, itemTypes));
    } else {
      input[key] = values.length === 1 ? coerce(values[0] as string, types) : values;
    }
  }
  return input;
}
