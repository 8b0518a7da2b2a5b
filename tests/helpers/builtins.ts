/** What the builtin registry is expected to hold, as the black-box and unit suites assert it. */

export const BUILTIN_CAPABILITY_IDS = [
  'capabilities.describe',
  'capabilities.list',
  'guard.install',
  'guard.status',
  'guard.uninstall',
  'harness.list_profiles',
  'harness.session_kill',
  'harness.session_list',
  'harness.session_read',
  'harness.session_resource',
  'harness.session_send',
  'harness.session_status',
  'harness.spawn',
  'health.live',
  'health.ready',
  'objects.get',
  'objects.list',
  'objects.search',
  'peers.announce',
  'peers.list',
  'repository.info',
  'tasks.cancel_task',
  'tasks.check_task',
  'tasks.reply_task',
  'tasks.run_task',
  'tasks.usage',
];

export const BUILTIN_TOOLS = [
  'cancel_task',
  'check_task',
  'majordomus_announce',
  'majordomus_capabilities',
  'majordomus_capability',
  'majordomus_get',
  'majordomus_guard_install',
  'majordomus_guard_status',
  'majordomus_guard_uninstall',
  'majordomus_info',
  'majordomus_list',
  'majordomus_list_profiles',
  'majordomus_peers',
  'majordomus_search',
  'majordomus_session_kill',
  'majordomus_session_list',
  'majordomus_session_read',
  'majordomus_session_send',
  'majordomus_session_status',
  'majordomus_spawn',
  'majordomus_usage',
  'reply_task',
  'run_task',
];

/** The commands among them (POST routes, not read-only). */
export const BUILTIN_COMMAND_IDS = [
  'guard.install',
  'guard.uninstall',
  'harness.session_kill',
  'harness.session_send',
  'harness.spawn',
  'peers.announce',
  'tasks.cancel_task',
  'tasks.reply_task',
  'tasks.run_task',
];

/** MCP annotations beyond the kind's: what each tool declares it may destroy or reach. */
export const TOOL_EFFECTS: Readonly<Record<string, { destructiveHint?: boolean; openWorldHint?: boolean }>> = {
  majordomus_spawn: { openWorldHint: true },
  majordomus_session_send: { openWorldHint: true, destructiveHint: true },
  majordomus_session_kill: { destructiveHint: true },
  run_task: { openWorldHint: true },
  reply_task: { openWorldHint: true },
  cancel_task: { destructiveHint: true },
};
