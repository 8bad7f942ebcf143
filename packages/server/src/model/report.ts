import { modelError, type ModelError } from './errors.js';
import { locate, type LocateOptions, type ParsedFile, type Path } from './parse.js';

/** Collects the errors of one validation; each is placed in its file when it is raised. */
export class Report {
  readonly errors: ModelError[] = [];

  at(file: ParsedFile, path: Path, message: string, options?: LocateOptions): void {
    this.errors.push(modelError(file.path, message, locate(file, path, options)));
  }

  add(errors: ModelError[]): void {
    for (const error of errors) this.errors.push(error);
  }
}
