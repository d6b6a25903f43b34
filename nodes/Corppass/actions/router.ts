import type { OperationTable } from '../../shared/router';
import * as getAuthorizationInfo from './authorization/getInfo.operation';
import * as completeLogin from './login/complete.operation';
import * as startLogin from './login/start.operation';

export const operations: OperationTable = {
  login: { startLogin, completeLogin },
  authorization: { getAuthorizationInfo },
};
