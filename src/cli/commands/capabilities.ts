/**
 * `majordomus capabilities list|describe|schema|validate`. `list` and `describe` run the
 * capabilities whose CLI path they are; `schema` and `validate` work on the registry itself.
 */
import { CapabilityError, EXIT, MajordomusError } from '../../platform/errors.js';
import { createLayerView } from '../../layer/view.js';
import { loadLayer } from '../../layer/load.js';
import { jsonSchemaOf, type CapabilityEntry } from '../../registry/catalog.js';
import type { CapabilityDescriptor } from '../../registry/descriptor.js';
import type { ContextByReads } from '../../capabilities/context.js';
import { execute, parseInput, type Registry } from '../../registry/registry.js';
import { builtinRegistry } from '../../runtime/load.js';
import { settings } from '../../platform/settings.js';
import { choiceOption, usageError, type ParsedArgs } from '../args.js';

function print(text: string): void {
  process.stdout.write(`${text}\n`); // -- stdout-ok: the command's answer
}

async function contextFor(
  descriptor: CapabilityDescriptor,
  registry: Registry,
  args: ParsedArgs,
): Promise<ContextByReads[keyof ContextByReads]> {
  if (descriptor.reads === 'registry') return { catalog: registry.catalog };
  if (descriptor.reads === 'layer') {
    const index = await loadLayer({ cwd: process.cwd(), ...args.global });
    return { catalog: registry.catalog, layer: createLayerView(index), generation: 1 };
  }
  throw new MajordomusError('MAJ_INTERNAL', `${descriptor.id} reads the peer board and has no CLI path`);
}

/** Runs the capability bound to a CLI path; a refusal becomes the matching local error. */
export async function runCliPath(registry: Registry, path: string, input: unknown, args: ParsedArgs): Promise<unknown> {
  const descriptor = registry.descriptors.find((d) => d.exposure.cli?.path === path);
  if (!descriptor) throw new MajordomusError('MAJ_INTERNAL', `no capability has the CLI path "${path}"`);
  try {
    const parsed = parseInput(descriptor, input);
    return await execute(descriptor, parsed, await contextFor(descriptor, registry, args), { fault: settings().faultCapability });
  } catch (error) {
    if (error instanceof CapabilityError && error.code === 'not_found') {
      throw new MajordomusError('MAJ_UNKNOWN_CAPABILITY', error.message);
    }
    if (error instanceof CapabilityError) throw usageError(error.message);
    throw error;
  }
}

function entryOrExit(registry: Registry, id: string | undefined): CapabilityEntry {
  if (id === undefined) throw usageError('name a capability id');
  const entry = registry.catalog.byId(id);
  if (!entry) throw new MajordomusError('MAJ_UNKNOWN_CAPABILITY', `no capability ${id}`);
  return entry;
}

export async function runCapabilities(args: ParsedArgs): Promise<number> {
  const [action, id, ...extra] = args.positionals;
  if (extra.length > 0) throw usageError(`unexpected argument "${extra[0]}"`);
  const allowed: Record<string, string[]> = { list: ['format', 'kind'], describe: [], schema: ['side'], validate: [] };
  if (action === undefined || !(action in allowed)) {
    throw usageError(`capabilities needs list, describe, schema or validate${action ? `, not "${action}"` : ''}`);
  }
  for (const name of ['format', 'kind', 'side'] as const) {
    if (args.options[name] !== undefined && !allowed[action]?.includes(name)) {
      throw usageError(`--${name} is not an option of capabilities ${action}`);
    }
  }
  if ((action === 'list' || action === 'validate') && id !== undefined) throw usageError(`unexpected argument "${id}"`);

  if (action === 'validate') return validate();
  const registry = builtinRegistry();
  switch (action) {
    case 'list': {
      const format = choiceOption(args.options.format, 'format', ['text', 'json'] as const, 'text');
      const input = args.options.kind === undefined ? {} : { kind: args.options.kind };
      const answer = (await runCliPath(registry, 'capabilities list', input, args)) as {
        capabilities: Array<Pick<CapabilityEntry, 'id' | 'kind' | 'title' | 'exposure'>>;
      };
      if (format === 'json') {
        print(JSON.stringify(answer, null, 2));
      } else {
        for (const c of answer.capabilities) {
          const http = c.exposure.http ? `${c.exposure.http.method} ${c.exposure.http.path}` : '-';
          print(`${c.id.padEnd(24)} ${c.kind.padEnd(8)} ${(c.exposure.mcp?.tool ?? '-').padEnd(24)} ${http}`);
        }
      }
      return EXIT.ok;
    }
    case 'describe': {
      if (id === undefined) throw usageError('capabilities describe needs an ID');
      print(JSON.stringify(await runCliPath(registry, 'capabilities describe', { id }, args), null, 2));
      return EXIT.ok;
    }
    default: {
      const side = choiceOption(args.options.side, 'side', ['input', 'output'] as const, 'input');
      const entry = entryOrExit(registry, id);
      print(JSON.stringify(side === 'input' ? entry.input_schema : entry.output_schema, null, 2));
      return EXIT.ok;
    }
  }
}

/** Builds the registry with every check and converts every schema; exit 10 on any failure. */
function validate(): number {
  let registry: Registry;
  try {
    registry = builtinRegistry();
  } catch (error) {
    throw new MajordomusError('MAJ_VALIDATION_FAILED', error instanceof Error ? error.message : String(error));
  }
  for (const d of registry.descriptors) {
    jsonSchemaOf(d.input, 'input');
    jsonSchemaOf(d.output, 'output');
  }
  print(`registry valid: ${registry.descriptors.length} capabilities`);
  return EXIT.ok;
}
