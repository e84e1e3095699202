/**
 * Prints a nats-server `authorization` block with one user per role and the
 * permissions of contract/permissions.ts, for a server with config-file users
 * (the bundled NATS chart's `config.merge`, or any server):
 *
 *   node scripts/nats-permissions.ts --prefix agent-runtime [--json]
 *
 * Passwords are `$GATEWAY_PASSWORD`-style variables the server reads from its
 * environment; put the same values in the chart's secrets.natsRoles Secrets.
 * Session runners are not config-file users: their credentials are user JWTs (operator mode).
 */
import { parseArgs } from 'node:util'
import { permissionsFor, STATIC_ROLES, type NatsPermissions } from '../contract/permissions.ts'

const { values } = parseArgs({ options: { prefix: { type: 'string', default: 'agent-runtime' }, json: { type: 'boolean', default: false } } })
const prefix = values.prefix!

function serverPermissions(p: NatsPermissions) {
  const list = (l: { allow: string[]; deny: string[] }) => ({ allow: l.allow, ...(l.deny.length > 0 && { deny: l.deny }) })
  return { publish: list(p.publish), subscribe: list(p.subscribe), ...(p.allowResponses && { allow_responses: true }) }
}

const users = STATIC_ROLES.map((role) => ({
  user: role,
  password: `$${role.toUpperCase()}_PASSWORD`,
  permissions: serverPermissions(permissionsFor({ role, prefix })),
}))
if (values.json) console.log(JSON.stringify({ authorization: { users } }, null, 2))
else {
  // The server's config format accepts JSON-style values; variables stay unquoted so it expands them.
  const body = JSON.stringify({ users }, null, 2).replace(/"(\$[A-Z_]+)"/g, '$1')
  console.log(`authorization ${body}`)
}
