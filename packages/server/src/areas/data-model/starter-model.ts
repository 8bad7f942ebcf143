/** The model every new deployment starts with; its names start with `starter_`, so user models never collide with it. */
export const STARTER_MODEL_PATH = 'model/cubes/starter.yml';

export const STARTER_MODEL = `cubes:
  - name: starter_orders
    sql: >
      SELECT 1 AS id, 'completed' AS status, 10 AS amount
      UNION ALL SELECT 2, 'processing', 20
    dimensions:
      - name: id
        sql: id
        type: number
        primary_key: true
      - name: status
        sql: status
        type: string
    measures:
      - name: count
        type: count
      - name: total_amount
        sql: amount
        type: sum

views:
  - name: starter_orders_view
    cubes:
      - join_path: starter_orders
        includes: "*"
`;
