/** The admin API's session routes (routes.ts) in the admin document. */
import { emptyQuerySchema } from '@mgw/contracts';
import { CONSOLE_ROLES } from '@mgw/store';
import type { AdminOperationSpec } from '../../openapi/admin-operation.js';
import type { JsonSchema } from '../../openapi/joi-schema.js';
import { closed, str, timestamp } from '../../openapi/schema-helpers.js';
import { signInSchema, viewSchema } from './admin-auth.js';

export type SessionName = 'signIn' | 'whoAmI' | 'signOut' | 'viewWorkspace' | 'leaveWorkspace';

export const sessionSchemas: Record<string, JsonSchema> = {
  AdminSession: closed(
    {
      success: { const: true },
      via: {
        enum: ['session', 'token'],
        description: '`session`: a dashboard session (its cookie); `token`: an admin token.',
      },
      csrfToken: str("A session's: the `X-CSRF-Token` of its changes."),
      createdAt: timestamp('When the session began.'),
      expiresAt: timestamp('When it ends.'),
      tokenId: str('An admin token of the token CLI: its id (absent: ADMIN_API_TOKEN).'),
      role: {
        enum: ['operator', ...CONSOLE_ROLES],
        description: 'The operator (every workspace), or a workspace console\u2019s admin or agent.',
      },
      workspace: {
        ...closed({ id: str('The workspace id.'), name: str('Its name.') }, ['id', 'name']),
        description: 'A session scoped to one workspace (a user\u2019s, or the operator viewing one).',
      },
      user: str("A console user's session: its user name."),
      viewing: { const: true, description: 'The operator, looking at a workspace as its admin sees it.' },
    },
    ['success', 'via', 'role'],
  ),
};

export function sessionOperations(
  op: (spec: AdminOperationSpec) => JsonSchema,
): Record<SessionName, JsonSchema> {
  const tag = 'Session' as const;
  const session = {
    status: 200,
    schema: 'AdminSession',
    description: 'Who is signed in, and the CSRF token of the session.',
  };
  return {
    signIn: op({
      tag,
      summary: 'Sign in',
      description:
        '`{ password }` (the operator, with ADMIN_PASSWORD set: 404 otherwise) or `{ user, password }` (a console user): sets the session cookie. No credentials needed.',
      body: signInSchema,
      success: session,
      errors: [],
    }),
    whoAmI: op({
      tag,
      summary: 'Who is signed in',
      description: 'The session (or the admin token: the operator) and its CSRF token.',
      query: emptyQuerySchema,
      success: session,
      errors: [],
    }),
    signOut: op({
      tag,
      summary: 'Sign out',
      description: 'Ends the session.',
      success: {
        status: 200,
        schema: closed({ success: { const: true } }, ['success']),
        description: 'Signed out.',
      },
      errors: [413],
    }),
    viewWorkspace: op({
      tag,
      summary: 'Open a workspace as its admin sees it',
      description:
        "The operator's session views `workspaceId` as its console (`viewing: true`); a console user's session gets 404, an admin token 403.",
      body: viewSchema,
      success: session,
      errors: [],
    }),
    leaveWorkspace: op({
      tag,
      summary: "Back to the operator's view",
      description: "The operator's session leaves the workspace it viewed.",
      success: session,
      errors: [413],
    }),
  };
}
