/**
 * Liveness and readiness, for load balancers and scripts.
 */
import { z } from 'zod';
import type { CapabilityDescriptor } from '../registry/descriptor.js';
import { capability } from './context.js';

const noInput = z.object({}).strict();

export const healthLive = capability({
  id: 'health.live',
  kind: 'query',
  title: 'Liveness',
  description: 'Answers while the process serves.',
  input: noInput,
  output: z.object({ status: z.literal('live') }),
  exposure: { http: { method: 'GET', path: '/api/v1/health/live' } },
  stability: 'stable',
  reads: 'registry',
  handler: () => ({ status: 'live' as const }),
});

export const healthReady = capability({
  id: 'health.ready',
  kind: 'query',
  title: 'Readiness',
  description: 'Whether the layer is served in full (ok) or with excluded files (degraded).',
  input: noInput,
  output: z.object({ status: z.literal('ready'), layer: z.enum(['ok', 'degraded']), objects: z.number().int() }),
  exposure: { http: { method: 'GET', path: '/api/v1/health/ready' } },
  stability: 'stable',
  reads: 'layer',
  handler: (_input, { layer }) => ({
    status: 'ready' as const,
    layer: layer.index.state,
    objects: layer.index.objects.length,
  }),
});

export const HEALTH_CAPABILITIES: readonly CapabilityDescriptor[] = Object.freeze([healthLive, healthReady]);
