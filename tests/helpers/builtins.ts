/** What the builtin registry is expected to hold, as the black-box and unit suites assert it. */

export const BUILTIN_CAPABILITY_IDS = [
  'capabilities.describe',
  'capabilities.list',
  'health.live',
  'health.ready',
  'objects.get',
  'objects.list',
  'objects.search',
  'peers.announce',
  'peers.list',
  'repository.info',
];

export const BUILTIN_TOOLS = [
  'majordomus_announce',
  'majordomus_capabilities',
  'majordomus_capability',
  'majordomus_get',
  'majordomus_info',
  'majordomus_list',
  'majordomus_peers',
  'majordomus_search',
];
