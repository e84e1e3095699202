/** The typed client in a browser (the web console): the native WebSocket, the key in `?api_key=`. */
import { AgentClient, type ConnectOptions } from './client.ts'
import { openBrowserSocket } from './browser-socket.ts'

export function connect(options: ConnectOptions): Promise<AgentClient> {
  return new AgentClient(options, openBrowserSocket).start()
}

export type { AgentClient, ConnectionStatus } from './client.ts'
export type { Session } from './session.ts'
