import { SingpassFlowsError, isSingpassFlowsError } from '../errors';

/**
 * How a front end names its settings in messages, so a low-code user is told which box to fix in THEIR editor: n8n
 * says `Credential "Singpass Sign API", field "DSAP Signing Key"`, Node-RED `Singpass Sign API client "Acme", field
 * "Signing key"`. The core's setup functions take these; the wording of the rest of the message is the core's.
 */
export interface SettingLabels {
  /** Where the settings are, e.g. `Credential "Singpass Sign API"` or `Singpass Sign API client "Acme"`. */
  where: string;
  /** The editor's label for each setting key the core checks (a key without a label is shown as the key). */
  fields: Readonly<Record<string, string>>;
}

/**
 * Run `check` for the setting `key`; a typed error it throws is re-thrown naming where and which field (the core's
 * code and details kept). An error that names a more precise setting itself (`details.field` is one of the labelled
 * keys, e.g. the sandbox URL under "Environment") is named by that one.
 */
export function inSetting<T>(labels: SettingLabels, key: string, check: () => T): T {
  const wrap = (e: unknown): never => {
    if (!isSingpassFlowsError(e)) throw e;
    const inner = typeof e.details.field === 'string' && labels.fields[e.details.field] !== undefined ? e.details.field : undefined;
    const field = labels.fields[inner ?? key] ?? key;
    const message = inner && e.message.startsWith(`${inner}: `) ? e.message.slice(inner.length + 2) : e.message;
    throw new SingpassFlowsError(e.code, `${labels.where}, field "${field}": ${message}`, { ...e.details, field }, { cause: e });
  };
  try {
    const out = check();
    return (out instanceof Promise ? out.catch(wrap) : out) as T;
  } catch (e) {
    return wrap(e);
  }
}
