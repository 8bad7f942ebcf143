/**
 * Reference 1.11: a variable whose name holds one of these words is a secret: its value reads back
 * masked and is kept out of runtime logs. Case is ignored, so `db_password` is one too.
 */
const SECRET_NAME = /PASS|SECRET|TOKEN|KEY|CREDENTIAL/i;

export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}
