/** A change to one job that `waitFor` listens for. */
export interface ChangeListener {
  /** Resolves on the change, or after `ms` (the change may happen in another process). */
  within(ms: number): Promise<void>;
  cancel(): void;
}

/** Tells `waitFor` calls in this process that a job's state may have changed here. */
export class Changes {
  readonly #listeners = new Map<number, Set<() => void>>();

  notify(id: number): void {
    for (const listener of [...(this.#listeners.get(id) ?? [])]) listener();
  }

  next(id: number): ChangeListener {
    let fired = false;
    let wake: (() => void) | undefined;
    const listener = () => {
      fired = true;
      wake?.();
    };
    let set = this.#listeners.get(id);
    if (!set) this.#listeners.set(id, (set = new Set()));
    set.add(listener);
    return {
      within: (ms) =>
        fired
          ? Promise.resolve()
          : new Promise<void>((resolve) => {
              const timer = setTimeout(resolve, ms);
              wake = () => {
                clearTimeout(timer);
                resolve();
              };
            }),
      cancel: () => {
        set.delete(listener);
        if (set.size === 0 && this.#listeners.get(id) === set) this.#listeners.delete(id);
      },
    };
  }
}
