import { Type, type Static } from 'typebox';
import { LegacyPageOf } from '../../shared/pagination.js';
import { Nullable, PageQuery, Timestamp } from '../../shared/schemas.js';

const BaseUrl = (description: string) =>
  Type.String({ minLength: 1, maxLength: 2048, description: `${description} https (http only on localhost, 127.0.0.1 or [::1], for development).` });

export const GitHostAppSchema = Type.Object(
  {
    apiBaseUrl: Type.String({ description: 'The host’s REST API, such as `https://api.github.com`.' }),
    webBaseUrl: Type.String({ description: 'The host’s web origin, such as `https://github.com`: user authorization and the app’s install page.' }),
    appId: Type.String(),
    appSlug: Type.String({ description: 'The app’s name in its install page URL, `<webBaseUrl>/apps/<appSlug>/installations/new`.' }),
    clientId: Type.String(),
    callbackUrl: Type.String({ description: 'This server’s callback: register it as the app’s user-authorization callback URL.' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'GitHostApp', description: 'The account’s git-host app. The client secret and the private key are stored encrypted and never returned.' },
);
export type GitHostApp = Static<typeof GitHostAppSchema>;

export const PutGitHostAppBody = Type.Object(
  {
    apiBaseUrl: BaseUrl('The host’s REST API.'),
    webBaseUrl: BaseUrl('The host’s web origin.'),
    appId: Type.String({ minLength: 1, maxLength: 64 }),
    appSlug: Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$' }),
    clientId: Type.String({ minLength: 1, maxLength: 255 }),
    clientSecret: Type.Optional(
      Nullable(Type.String({ minLength: 1, maxLength: 4096, description: 'Required the first time; left out or null keeps the stored one.' })),
    ),
    privateKey: Type.Optional(
      Nullable(
        Type.String({
          minLength: 1,
          maxLength: 16384,
          description: 'The app’s PEM private key. Required the first time; left out or null keeps the stored one.',
        }),
      ),
    ),
  },
  { additionalProperties: false },
);
export type PutGitHostAppInput = Static<typeof PutGitHostAppBody>;

export const GitHostStatusSchema = Type.Object(
  {
    connected: Type.Boolean({ description: 'Whether the caller has linked their git-host account.' }),
    linkUrl: Type.String({
      description:
        'Where to send the user to link (or re-link) their account; its `state` is single use and lives 10 minutes. Empty while the account has no git-host app.',
    }),
    settingsUrl: Type.String({ description: 'Where the app is installed on an organisation or account. Empty while the account has no git-host app.' }),
  },
  { $id: 'GitHostStatus' },
);

export const GitHostInstallationSchema = Type.Object(
  {
    installationId: Type.String({ description: 'The installation id, as a string (an integer in the other git-host routes).' }),
    id: Type.String({ description: 'The same installation id.' }),
    login: Type.String({ description: 'The organisation or account the app is installed on.' }),
    avatarUrl: Type.String(),
  },
  { $id: 'GitHostInstallation' },
);

export const GitHostRepositorySchema = Type.Object({ id: Type.Integer(), name: Type.String(), htmlUrl: Type.String() }, { $id: 'GitHostRepository' });
export const GitHostBranchSchema = Type.Object({ name: Type.String(), isDefault: Type.Boolean() }, { $id: 'GitHostBranch' });

export const GitHostCallbackQuery = Type.Object({
  code: Type.Optional(Type.String({ maxLength: 2048 })),
  state: Type.Optional(Type.String({ maxLength: 512 })),
  error: Type.Optional(Type.String({ maxLength: 512 })),
});
export type GitHostCallbackInput = Static<typeof GitHostCallbackQuery>;

export const GitHostCallbackResult = Type.Object({ connected: Type.Boolean(), login: Type.String() }, { $id: 'GitHostCallbackResult' });

export const InstallationParams = Type.Object({ installationId: Type.Integer({ minimum: 1 }) });
export const RepositoryParams = Type.Object({
  owner: Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9._-]+$' }),
  repo: Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9._-]+$' }),
});
export const ListQuery = Type.Object({ ...PageQuery });
export const BranchesQuery = Type.Object({ installationId: Type.Integer({ minimum: 1 }), ...PageQuery });

export const gitHostSchemas = [
  GitHostAppSchema,
  GitHostStatusSchema,
  GitHostInstallationSchema,
  GitHostRepositorySchema,
  GitHostBranchSchema,
  GitHostCallbackResult,
  LegacyPageOf('GitHostInstallation'),
  LegacyPageOf('GitHostRepository'),
  LegacyPageOf('GitHostBranch'),
];

/** Reference 2.20 `ConnectGitHostRequest`. */
export const ConnectGitHostBody = Type.Object(
  {
    installationId: Type.Integer({ minimum: 1, description: 'From GET /api/v1/git-host/installations (5.20).' }),
    name: Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9._-]+$', description: 'The repository’s name under the installation’s account.' }),
    deployBranchName: Type.Optional(
      Nullable(
        Type.String({
          minLength: 1,
          maxLength: 255,
          description: 'Default: the repository’s default branch (for a new repository, the deployment’s deploy branch).',
        }),
      ),
    ),
    deployProjectRoot: Type.Optional(Nullable(Type.String({ maxLength: 1024, description: 'Default: the deployment’s current project root.' }))),
    isNewRepo: Type.Optional(Nullable(Type.Boolean({ description: 'Create the repository (empty) and put the deployment’s model in it.' }))),
    private: Type.Optional(Nullable(Type.Boolean({ description: 'Visibility of a new repository; default true.' }))),
  },
  { additionalProperties: false },
);
export type ConnectGitHostInput = Static<typeof ConnectGitHostBody>;
