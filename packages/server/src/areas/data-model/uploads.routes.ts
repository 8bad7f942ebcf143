import multipart from '@fastify/multipart';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ApiError } from '../../shared/problems.js';
import { DeploymentParams } from '../../shared/schemas.js';
import { MAX_FILE_BYTES } from './data-model.schemas.js';
import { FinishUploadBody, UploadFileFields, UploadQuery } from './uploads.schemas.js';
import type { UploadsService } from './uploads.service.js';

const tags = ['Data model'];
const base = '/build/api/v1/deployments/:deploymentId/data-model/upload';
const COMMON = ['FORBIDDEN', 'DEPLOYMENT_NOT_FOUND'] as const;

/** Reads the one file part and the fields of an upload, the file cut off (and refused) past the size limit. */
async function readUploadParts(
  parts: AsyncIterable<{ type: 'file' | 'field'; fieldname: string; value?: unknown; toBuffer?: () => Promise<Buffer>; file?: { truncated: boolean } }>,
) {
  const fields = new Map<string, string>();
  let content: Buffer | null = null;
  for await (const part of parts) {
    if (part.type === 'file') {
      if (content !== null) throw new ApiError('VALIDATION_FAILED', 'Send one file per request.');
      content = await (part.toBuffer as () => Promise<Buffer>)();
      if (part.file?.truncated)
        throw new ApiError('PAYLOAD_TOO_LARGE', `The file is larger than ${MAX_FILE_BYTES} bytes, the most a data-model file may hold.`);
    } else if (typeof part.value === 'string') {
      fields.set(part.fieldname, part.value);
    }
  }
  return { fields, content };
}

export function uploadsRoutes(service: UploadsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    // Limits per request: one file of at most MAX_FILE_BYTES, a few short fields.
    await app.register(multipart, { limits: { fileSize: MAX_FILE_BYTES, files: 1, fields: 8, fieldSize: 4096, parts: 10 }, throwFileSizeLimit: false });

    app.post(
      `${base}/start`,
      {
        config: { optionalBody: true },
        schema: {
          operationId: 'startUpload',
          tags,
          summary: 'Start an upload transaction (reference 2.6; SchemaUpdate)',
          description:
            'The upload targets `branchName`, else the credential’s active dev-mode branch, else the deploy branch (403 while that is read-only). The transaction stays open for an hour.',
          params: DeploymentParams,
          querystring: UploadQuery,
          response: { 200: Type.Ref('StartUploadResponse') },
          problems: [...COMMON, 'BRANCH_NOT_FOUND'],
        },
      },
      async (request) => service.start(request.caller, request.params.deploymentId, request.query),
    );

    app.post(
      `${base}/file`,
      {
        config: { contentTypes: ['multipart/form-data'] },
        schema: {
          operationId: 'uploadFile',
          tags,
          summary: 'Upload one file into the transaction (reference 2.7; multipart: transaction, fileName, file)',
          description: 'At most 1 MiB a file. The file is stored, but no branch changes until the upload finishes.',
          consumes: ['multipart/form-data'],
          multipartBody: UploadFileFields,
          params: DeploymentParams,
          querystring: UploadQuery,
          response: { 200: Type.Object({}) },
          problems: [...COMMON, 'UPLOAD_NOT_FOUND', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'],
        },
      },
      async (request) => {
        if (!request.isMultipart()) {
          await service.mayUpload(request.caller, request.params.deploymentId);
          throw new ApiError('UNSUPPORTED_MEDIA_TYPE', 'Send the file as multipart/form-data with the fields transaction, fileName and file.');
        }
        // The parts are read from the start (a body already flowing would lose what arrives before),
        // while the caller's right to upload is checked; a refusal wins over anything in the body.
        const reading = readUploadParts(request.parts() as never);
        reading.catch(() => undefined);
        await service.mayUpload(request.caller, request.params.deploymentId);
        const { fields, content } = await reading;
        const transaction = fields.get('transaction');
        const fileName = fields.get('fileName');
        const missing = [transaction === undefined ? 'transaction' : null, fileName === undefined ? 'fileName' : null, content === null ? 'file' : null].filter(
          (m) => m !== null,
        );
        if (missing.length > 0) {
          throw new ApiError('VALIDATION_FAILED', `The multipart body needs the fields transaction, fileName and file; missing: ${missing.join(', ')}.`, {
            errors: missing.map((m) => ({ pointer: `/body/${m}`, message: 'is required' })),
          });
        }
        return service.receive(request.caller, request.params.deploymentId, {
          transaction: transaction ?? '',
          fileName: fileName ?? '',
          content: content ?? Buffer.alloc(0),
        });
      },
    );

    app.post(
      `${base}/finish`,
      {
        schema: {
          operationId: 'finishUpload',
          tags,
          summary: 'Finish the upload: commit it and start one build (reference 2.8; SchemaUpdate)',
          description:
            '`files` is the whole project (path → git blob SHA-1, as `file-hashes` gives it). Files uploaded in the transaction, and files of the branch missing from `files` (unless `autoRemoveFiles` is false), become one commit; then one build starts. `lastHash` is the branch’s head after it.',
          params: DeploymentParams,
          querystring: UploadQuery,
          body: FinishUploadBody,
          response: { 200: Type.Ref('FinishUploadResponse') },
          problems: [...COMMON, 'UPLOAD_NOT_FOUND', 'BRANCH_NOT_FOUND', 'BRANCH_MOVED'],
        },
      },
      async (request) => service.finish(request.caller, request.params.deploymentId, request.body),
    );
  };
}
